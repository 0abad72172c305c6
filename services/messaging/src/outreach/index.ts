/**
 * Outreach (issue #26): conversations the CRM starts with people who never wrote (imported leads, campaign
 * recipients). Other folders use only this face.
 */
export { startConversation } from './start-conversation';
