import { randomUUID } from 'node:crypto';
import type { Queryable } from '@crm/db';
import type { Deps } from '../deps';
import { outOfHoursMessages } from '../inbox-settings';
import { businessHoursFor, businessHoursStatusAt } from '../service-levels';
import { queue, type NewAutoMessage } from './repo';

/** A message from a contact just stored by the inbound batch. */
export interface ReceivedMessage {
  orgId: string;
  conversationId: string;
  chatnetAccountId: string;
  threadType: string;
  /** The message stored (the AI auto-reply answers it). */
  messageId?: string;
  /** Its inbound event's verified stamp (the AI auto-reply asks ai under it). */
  origin?: string;
}

/**
 * The out-of-hours reply (issue #29 item 3), planned in the inbound batch's transaction and sent after commit by
 * AutoMessageSender: a one-to-one conversation that hears from its contact while its account's business hours (its
 * own, else the org's) are closed gets the org's `outOfHoursMessage`, once per closed period — the dedupe key names
 * the conversation and the time the hours open again. Whether the hours are open is asked at the time the batch is
 * stored (the reply says "we are closed" now). One query for the batch when no org of it set a message (the usual case).
 */
export async function planOutOfHoursReplies(deps: Deps, db: Queryable, received: ReceivedMessage[], now = new Date()): Promise<void> {
  const candidates = received.filter((r) => r.threadType === 'user');
  const messages = await outOfHoursMessages(db, [...new Set(candidates.map((r) => r.orgId))]);
  if (messages.size === 0) return;
  const statuses = new Map<string, Promise<{ open: boolean; nextChangeAt: Date | null }>>();
  const statusOf = (orgId: string, accountId: string) => {
    const key = `${orgId}\n${accountId}`;
    let found = statuses.get(key);
    if (!found) statuses.set(key, (found = businessHoursFor(deps, orgId, accountId).then(({ hours }) => businessHoursStatusAt(hours, now))));
    return found;
  };
  const items: NewAutoMessage[] = [];
  const seen = new Set<string>();
  for (const r of candidates) {
    const content = messages.get(r.orgId);
    if (!content) continue;
    const status = await statusOf(r.orgId, r.chatnetAccountId);
    if (status.open) continue;
    const dedupeKey = `out_of_hours:${r.conversationId}:${status.nextChangeAt?.toISOString() ?? 'closed'}`;
    if (seen.has(dedupeKey)) continue;
    seen.add(dedupeKey);
    items.push({ id: randomUUID(), orgId: r.orgId, conversationId: r.conversationId, kind: 'out_of_hours', content, dedupeKey });
  }
  await queue(db, items);
}
