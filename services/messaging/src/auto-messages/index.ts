/**
 * What the inbox says by itself after commit (issue #29): the out-of-hours reply and the CSAT question, each a due
 * row (migration 030) sent once through the ordinary send with source `auto`. The rest of messaging uses this face.
 */
export { AUTO_MESSAGES_CHANNEL, type AutoMessageRow } from './repo';
export { AutoMessageSender, type OnAutoMessageSent } from './sender';
export { planOutOfHoursReplies, type ReceivedMessage } from './out-of-hours';
