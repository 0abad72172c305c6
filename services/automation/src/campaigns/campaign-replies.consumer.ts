import { isEventOf, type BatchHandler } from '@crm/events';
import type { Deps } from '../deps';
import { addReplies } from './campaigns.repo';
import { markReplied, type ContactReply } from './recipients.repo';
import { isUuid } from '@crm/validation';

export const REPLY_BINDINGS = ['message.received'];

export function repliesQueue(exchange: string): string {
  return `${exchange}.automation.campaign-replies`;
}

/**
 * Campaign replies, the measure behind `replyRate` (openRate comes from read receipts, see
 * campaign-seen.consumer.ts): a recipient replied when they write back within CAMPAIGN_REPLY_WINDOW_HOURS
 * after their message was sent. Every `message.received` is a candidate, and almost none is a reply to a campaign,
 * so a batch costs one statement whatever its size (it was one per message: a third of automation's CPU at 200
 * msg/s, most of it the statements' socket writes). Runs in the consumer's transaction with the processed-event
 * records, so a redelivered batch counts once; each recipient row is marked replied at most once.
 */
export function repliesHandler(deps: Deps): BatchHandler {
  return async (events, db) => {
    const replies: ContactReply[] = [];
    for (const event of events) {
      if (!isEventOf(event, 'message.received') || !isUuid(event.orgId)) continue;
      // Data parsed by its schema (parseData): sentAt is an instant; a group conversation has no contactId.
      const d = event.data;
      if (!isUuid(d.contactId)) continue;
      const at = new Date(d.sentAt);
      // A sender's clock ahead of ours must not stretch the window.
      replies.push({ orgId: event.orgId.toLowerCase(), contactId: d.contactId.toLowerCase(), at: at.getTime() > Date.now() ? new Date() : at });
    }
    const replied = await markReplied(db, replies, deps.config.CAMPAIGN_REPLY_WINDOW_HOURS);
    if (replied.size > 0) await addReplies(db, replied);
  };
}
