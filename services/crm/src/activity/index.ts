/** The contact's activity timeline and lastActivity, as message events keep them. */
export { messageActivity } from './message-activity';
