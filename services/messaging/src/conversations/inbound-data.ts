// Its own file because inbound.ts, contacts.ts and self-messages.ts all read it, and inbound.ts imports the other two.

import type { ParsedEventData } from '@crm/events';

/**
 * `chatnet.inbound` data as parseInbound normalises it, derived from the event's one schema (packages/events, the
 * catalogue): every field the schema has, the optional ones filled (`groupName` '' for user threads and when the
 * network did not say; `cliMsgId`, the sender's own id of the message kept to mark it read on the network, '' for
 * none; `quoteChatnetMessageId`, the quoted message's network id, '' for none), `sentAt` as a Date, the files by id
 * (already stored by the connector; uploads not yet linked) and `fromSelf` (the account itself wrote it, typed on the
 * phone: stored as outbound by self-messages.ts, never as received) as a boolean.
 */
export type InboundData = Required<Omit<ParsedEventData<'chatnet.inbound'>, 'sentAt' | 'attachments' | 'fromSelf'>> & {
  sentAt: Date;
  attachmentIds: string[];
  fromSelf: boolean;
};
