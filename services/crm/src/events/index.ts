/**
 * The plumbing of crm's event families: one consumer per family of other services' events, joining the modules
 * that react to them in one transaction (see event-families.ts).
 */
export { CONTACT_FAMILY, type FamilyModule, joinModules, MESSAGE_FAMILY } from './event-families';
export { contactFamilyConsumer } from './contact-family.consumer';
export { messageFamilyConsumer } from './message-family.consumer';
