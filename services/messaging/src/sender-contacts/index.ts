/** Which senders already have a crm contact, remembered for a few minutes by each instance. No Deps: deps.ts imports this. */
export { SenderContacts } from './sender-contacts';
