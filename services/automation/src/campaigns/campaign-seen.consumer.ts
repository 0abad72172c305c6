import { eventTraceFields, isEventOf, type BatchHandler, type ParsedEvent } from '@crm/events';
import type { Deps } from '../deps';
import { addSeen } from './campaigns.repo';
import { markSeen, recordedMessages, sendPendingInto, type SeenMessage } from './recipients.repo';
import { isUuid } from '@crm/validation';

export const SEEN_BINDINGS = ['message.seen'];

export function seenQueue(exchange: string): string {
  return `${exchange}.automation.campaign-seen`;
}

/** The most message ids one event may name (messaging publishes at most 500 per event). */
const MAX_IDS = 1000;

const uuids = (v: string[]): string[] => [...new Set(v.map((x) => x.toLowerCase()))].slice(0, MAX_IDS);

/**
 * Read receipts, the measure behind `openRate`: messaging's `message.seen` names the outbound messages the
 * chat network reported read; the campaign recipients that were sent one of them are seen, and their
 * campaigns count one more seen recipient each. Runs in the consumer's transaction with the processed-event
 * record, and a recipient is seen at most once, so a redelivered or repeated receipt counts once. A batch of
 * receipts is marked with one statement and counted with one per campaign (issue #28 item 2; it was that per receipt).
 *
 * A campaign message can be seen before the sender recorded its send (automation stopped between
 * messaging's answer and its own write): while a send into that conversation is still pending, the batch
 * fails and its receipts are retried (one at a time, as the consumer retries a failed batch), so the receipt
 * counts once the send is recorded.
 */
export function seenHandler(deps: Deps): BatchHandler {
  return async (events, db) => {
    const receipts = events.filter((e): e is ParsedEvent<'message.seen'> => isEventOf(e, 'message.seen') && isUuid(e.orgId));
    const seen: SeenMessage[] = [];
    for (const event of receipts) {
      // Data parsed by its schema (parseData): the ids are ids, seenAt an instant.
      const parsed = new Date(event.data.seenAt);
      const at = parsed.getTime() > Date.now() ? new Date() : parsed;
      for (const messageId of uuids(event.data.messageIds)) seen.push({ orgId: event.orgId.toLowerCase(), messageId, at });
    }
    if (seen.length === 0) return;
    const { perCampaign, matched } = await markSeen(db, seen);
    if (perCampaign.size > 0) await addSeen(db, perCampaign);

    for (const event of receipts) {
      const d = event.data;
      const campaignMessages = uuids(d.messages.filter((m) => m.source === 'campaign').map((m) => m.id)).filter(
        (id) => !matched.has(`${event.orgId.toLowerCase()}|${id}`),
      );
      if (campaignMessages.length === 0) continue;
      const recorded = await recordedMessages(db, event.orgId, campaignMessages);
      const unrecorded = campaignMessages.filter((id) => !recorded.has(id));
      if (unrecorded.length > 0 && (await sendPendingInto(db, event.orgId, d.conversationId.toLowerCase()))) {
        deps.log.info(
          { eventId: event.id, messages: unrecorded.length, ...eventTraceFields(event) },
          'campaign message seen before its send was recorded; retrying the receipt',
        );
        throw new Error('a seen campaign message has no recorded send yet');
      }
    }
  };
}
