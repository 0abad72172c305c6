/** crm's clients of other services: identity (users, assignability) and messaging (a contact's conversations, business hours). */
export { type BusinessHoursSource, messagingBusinessHours, type OrgBusinessHours } from './business-hours.client';
export { type IdentityChannel, identityChannel, identityDirectory, type UserDirectory } from './identity.client';
export {
  type ContactConversations,
  type ConversationRef,
  type ConversationSource,
  type ConversationSummary,
  messagingConversations,
} from './messaging.client';
