/**
 * The contacts core, crm's central module: contacts, notes, custom statuses, appointments, customer lists, friends
 * and inbox visibility (crm.v1.CrmService), laid out in layers inside (domain/, db/, grpc/, events/). This is
 * what the other modules and app.ts may use of it.
 */

// Wiring (app.ts, deps.ts).
export { type ActivityLine, type ContactWriters, type ImportedChange, ContactWriter, type NewContactScoring } from './contact-writer';
export type { ImportedValues } from './db/contact-batches.repo';
export { crmHandlers } from './grpc/crm.handler';
export { chatnetFriendsHandler } from './events/chatnet-friends.consumer';
export { INBOX_VISIBILITY_BINDINGS, inboxVisibilityHandler } from './events/inbox-visibility.consumer';
export { compactContactCounts } from './db/contacts.repo';
export { TotalCache } from './db/total-cache';

// The contact as other modules read it.
export {
  type ContactRow,
  findByChatnetUid,
  findContact,
  findIdByPhone,
  listContactsById,
  recordMessageActivity,
  toContact,
  toEventContact,
  touchLastActivity,
} from './db/contacts.repo';
export { contactFilter } from './domain/contacts';
export { diff } from './domain/contact-diff';
export { statusExists } from './db/statuses.repo';
export { viewerOf } from './domain/visibility';
export { conversationIdVisibleSql, orgLimitsAgentsSql } from './db/visibility.repo';
export { normalisePhone } from './domain/phone';
export { type ActivityType, recordActivities, recordActivity } from './db/activities.repo';
export { findAppointment, toAppointment } from './db/appointments.repo';
export { type Filter, validateCriteria } from './domain/list-criteria';

// Set-based reads and locks for other modules' batches (CSV import, socialnet leads, lead scoring, merges).
export { contactIdsAfter, contactIdsByPhone, contactsByIds, lockContactIds, lockImportMatches } from './db/contact-lookups.repo';
export { type ContactJsonRow, lockContactJsonRows } from './db/contact-json-rows.repo';
// Statements other modules own that join contacts (reports, lead scoring): the table as a FROM item, filtered on org.
export { matchingContactsSql, orgContactsSql, setLeadScoresSql } from './db/contact-fragments';
// The chat-network phone check's bookkeeping columns on contacts (chatnet-check's worker).
export {
  claimPhoneCheckBatches,
  PHONE_CHECK_CHANNEL,
  type PhoneCheckBatch,
  recordPhoneCheckAnswer,
  retryOrgPhoneChecksAt,
  retryPhoneChecksAt,
} from './db/phone-check.repo';
