import { isEventOf, type EventHandler } from '@crm/events';
import type { Deps } from '../deps';
import { addReplies } from './campaigns.repo';
import { markReplied } from './recipients.repo';
import { isUuid } from '@crm/validation';

export const REPLY_BINDINGS = ['message.received'];

export function repliesQueue(exchange: string): string {
  return `${exchange}.automation.campaign-replies`;
}

/**
 * Campaign replies, the measure behind `replyRate` (openRate comes from read receipts, see
 * campaign-seen.consumer.ts): a recipient replied when they write back within CAMPAIGN_REPLY_WINDOW_HOURS
 * after their message was sent. Runs in the consumer's transaction with the processed-event record, so a
 * redelivered message.received counts once; each recipient row is marked replied at most once.
 */
export function repliesHandler(deps: Deps): EventHandler {
  return async (event, db) => {
    if (!isEventOf(event, 'message.received') || !isUuid(event.orgId)) return;
    // Data parsed by its schema (parseData): sentAt is an instant; a group conversation has no contactId.
    const d = event.data;
    if (!isUuid(d.contactId)) return;
    const at = new Date(d.sentAt);
    // A sender's clock ahead of ours must not stretch the window.
    const when = at.getTime() > Date.now() ? new Date() : at;
    const replied = await markReplied(db, event.orgId, d.contactId.toLowerCase(), when, deps.config.CAMPAIGN_REPLY_WINDOW_HOURS);
    if (replied.size > 0) await addReplies(db, replied);
  };
}
