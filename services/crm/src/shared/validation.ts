// Every rule crm checks without its data is stated once in @crm/validation (the shared checks, and `crmRules`,
// crm's contract that the gateway's schemas are built from); escapeLike lives with the SQL helpers in @crm/db.
// This file only passes them on to crm's modules. Checks that need an org's data stay in the module that owns it.
export { escapeLike } from '@crm/db';
export { bulkIds, isoTimestamp, isUuid, oneOf, optionalEmail, optionalText, requireText, requireUuid } from '@crm/validation';
export { crmRules as rules } from '@crm/validation';
