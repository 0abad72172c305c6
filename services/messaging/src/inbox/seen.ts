import type { PoolClient } from '@crm/db';
import { enqueueEvent, eventTraceFields, eventTraceparent, type ParsedEvent, type ParsedEventData } from '@crm/events';
import type { Deps } from '../deps';
import { convs, messages, EVENTS } from '../conversations';

/** `chatnet.seen` data as the connector publishes it: a read receipt from the network. */
export interface SeenData {
  accountId: string;
  threadId: string;
  threadType: 'user' | 'group';
  chatnetMessageIds: string[];
  seenAt: Date;
}

/** One receipt names at most this many messages; more is not a receipt the network sends. */
const MAX_IDS = 500;
/** message.seen lists at most this many messages; a receipt covering more publishes several events. */
const EVENT_CHUNK = 500;

/**
 * The applied shape of a parsed chatnet.seen (the consumer's parseData checked types and ids): distinct ids, bounded
 * lengths; the reason when the schema allows it but it names nothing to apply (no thread, no message).
 */
export function parseSeen(d: ParsedEventData<'chatnet.seen'>): { ok: true; value: SeenData } | { ok: false; reason: string } {
  if (!d.threadId) return { ok: false, reason: 'threadId is empty' };
  const ids = [...new Set(d.chatnetMessageIds.filter(Boolean))];
  if (ids.length === 0) return { ok: false, reason: 'chatnetMessageIds is empty' };
  const at = new Date(d.seenAt);
  // A receipt stamped in the future (another clock) is taken as now.
  const seenAt = at.getTime() > Date.now() ? new Date() : at;
  return {
    ok: true,
    value: {
      accountId: d.accountId,
      threadId: d.threadId.slice(0, 200),
      threadType: d.threadType,
      chatnetMessageIds: ids.slice(0, MAX_IDS).map((id) => id.slice(0, 200)),
      seenAt,
    },
  };
}

/**
 * Apply one read receipt inside the consumer's transaction: the outbound messages it covers move from sent
 * to seen, and `message.seen` tells the rest of the system which ones. A receipt for a thread without a
 * conversation, for messages not stored, or already applied changes nothing and publishes nothing.
 */
export async function recordSeen(deps: Deps, db: PoolClient, event: ParsedEvent<'chatnet.seen'>): Promise<void> {
  const parsed = parseSeen(event.data);
  if (!parsed.ok) {
    deps.log.error({ eventId: event.id, reason: parsed.reason, ...eventTraceFields(event) }, 'chatnet.seen event is malformed; dropped');
    return;
  }
  const d = parsed.value;
  const conv = await convs.findByThread(db, event.orgId, d.accountId, d.threadType, d.threadId);
  if (!conv) return;
  const seen = await messages.markSeen(db, event.orgId, d.accountId, conv.id, d.chatnetMessageIds, d.seenAt);
  for (let i = 0; i < seen.length; i += EVENT_CHUNK) {
    const part = seen.slice(i, i + EVENT_CHUNK);
    await enqueueEvent(db, {
      type: EVENTS.messageSeen,
      orgId: event.orgId,
      data: {
        messageIds: part.map((m) => m.id),
        conversationId: conv.id,
        contactId: conv.contact_id,
        chatnetAccountId: d.accountId,
        assigneeId: conv.assignee_id,
        seenAt: d.seenAt.toISOString(),
        // The same messages with their source (ui, campaign, ...) and send time, for consumers that care which.
        messages: part.map((m) => ({ id: m.id, source: m.source, sentAt: m.sent_at.toISOString() })),
      },
      traceparent: eventTraceparent(event),
    });
  }
}
