/** Open-time arithmetic lives in @crm/business-hours (crm's analytics use it too); messaging's modules import it here. */
export * from '@crm/business-hours';
