import type { PoolClient } from '@crm/db';
import { bucketOf } from './buckets';
import * as repo from './conversations.repo';
import { compareItems, EMPTY_STATE, Item, REPLY, replay } from './turns';
import { periodsOf, UserStatsDeltas } from './user-stats';

/** Histogram series: every response, first responses, resolutions. */
export const SERIES = { response: 1, firstResponse: 2, resolution: 3 } as const;

/** The items a batch brings to one conversation, in any order. */
export interface ConversationItems {
  orgId: string;
  conversationId: string;
  items: Item[];
}

/**
 * Apply conversation items (inbound messages, replies, archives) inside the consumer's transaction. Per org
 * (in id order) the items are stored in one statement; those already stored (the same message reported twice)
 * are dropped. Then the org's conversations take their new items with a fixed number of statements (see
 * applyOrgItems): in order (the usual case) they advance the stored state; if one is older than the newest
 * applied, the conversation is replayed from all its items and its durations replaced, so the result is the
 * same whatever order the events came in. The aggregates (histogram, users) are summed over the batch and
 * written last, each kind in one statement for every org of the batch, in key order (org first), so concurrent
 * batches cannot deadlock on them.
 */
export async function applyConversationItems(db: PoolClient, batch: ConversationItems[]): Promise<void> {
  const byOrg = new Map<string, Map<string, Item[]>>();
  for (const { orgId, conversationId, items } of batch) {
    const conversations = byOrg.get(orgId) ?? new Map<string, Item[]>();
    byOrg.set(orgId, conversations);
    conversations.set(conversationId, [...(conversations.get(conversationId) ?? []), ...items]);
  }
  const deltas = new Map<string, Deltas>();
  for (const orgId of [...byOrg.keys()].sort()) {
    const conversations = byOrg.get(orgId)!;
    const distinct = new Map<string, { conversationId: string; item: Item }>();
    for (const [conversationId, items] of conversations)
      for (const item of items) if (!distinct.has(item.id)) distinct.set(item.id, { conversationId, item });
    const fresh = await repo.insertItems(
      db,
      orgId,
      [...distinct.values()].sort((a, b) => (a.item.id < b.item.id ? -1 : 1)),
    );
    const newItems = new Map<string, Item[]>();
    for (const { conversationId, item } of distinct.values())
      if (fresh.has(item.id)) newItems.set(conversationId, [...(newItems.get(conversationId) ?? []), item]);
    const orgDeltas = new Deltas();
    deltas.set(orgId, orgDeltas);
    await applyOrgItems(db, orgId, newItems, orgDeltas);
  }
  const orgs = [...deltas.keys()].sort();
  // Every org's aggregate rows in one statement per kind, orgs in id order.
  await repo.addToHistogram(
    db,
    orgs.flatMap((orgId) =>
      deltas
        .get(orgId)!
        .histogramRows()
        .map((row) => ({ ...row, orgId })),
    ),
  );
  await UserStatsDeltas.applyAll(
    db,
    orgs.map((orgId) => [orgId, deltas.get(orgId)!.users]),
  );
}

/**
 * New items (already stored) of one org's conversations. One statement locks the conversations that exist, in
 * id order; one creates those that do not; each new state is computed here and all are written with one
 * UPDATE, their durations with one INSERT. Two rarer cases take statements of their own, conversation by
 * conversation in id order: a conversation another transaction created after the lock (locked and continued
 * from its state), and items older than the newest applied (the conversation replayed from all its items).
 */
async function applyOrgItems(db: PoolClient, orgId: string, newItems: Map<string, Item[]>, deltas: Deltas): Promise<void> {
  const ids = [...newItems.keys()].sort();
  for (const id of ids) newItems.get(id)!.sort(compareItems);
  for (const id of ids) for (const item of newItems.get(id)!) if (item.kind === REPLY && item.userId) deltas.reply(item.at, item.userId);

  const locked = await repo.lockConversations(db, orgId, ids);
  const durations: (repo.StoredDuration & { conversationId: string })[] = [];
  const addDurations = (conversationId: string, ds: ReturnType<typeof replay>['durations']) => {
    for (const d of ds) durations.push({ ...stored(d), conversationId });
  };

  const missing = ids.filter((id) => !locked.has(id)).map((id) => ({ id, items: newItems.get(id)!, ...replay(EMPTY_STATE, newItems.get(id)!) }));
  const created = await repo.createConversations(
    db,
    orgId,
    missing.map((m) => ({ conversationId: m.id, last: m.items[m.items.length - 1], state: m.state })),
  );
  for (const m of missing) {
    if (created.has(m.id)) addDurations(m.id, m.durations);
    // Created meanwhile by another transaction, which this one waited for: continue from its state.
    else locked.set(m.id, (await repo.lockConversation(db, orgId, m.id))!);
  }

  const saved: repo.ConversationWrite[] = [];
  for (const id of ids) {
    const conv = locked.get(id);
    // Not locked: created above, with its state already written.
    if (!conv) continue;
    const items = newItems.get(id)!;
    if (compareItems(items[0], conv.last) > 0) {
      const { state, durations: ds } = replay(conv.state, items);
      saved.push({ conversationId: id, last: items[items.length - 1], state });
      addDurations(id, ds);
      continue;
    }
    for (const d of await repo.deleteDurations(db, orgId, id)) deltas.duration(d, -1);
    const all = await repo.conversationItems(db, orgId, id);
    const { state, durations: ds } = replay(EMPTY_STATE, all);
    saved.push({ conversationId: id, last: all[all.length - 1], state });
    addDurations(id, ds);
  }
  await repo.saveConversations(db, orgId, saved);
  await repo.insertDurations(db, orgId, durations);
  for (const d of durations) deltas.duration(d, 1);
}

function stored(d: ReturnType<typeof replay>['durations'][number]): repo.StoredDuration {
  const ms = d.endedAt - d.startedAt;
  return { ...d, ms, bucket: bucketOf(ms) };
}

/** Changes to one org's histogram, summed per row (zero changes dropped), and to its user rows. */
class Deltas {
  private readonly histogram = new Map<string, repo.HistogramDelta>();
  readonly users = new UserStatsDeltas();

  reply(at: number, userId: string) {
    this.users.add(at, userId, { replies: 1 });
  }

  duration(d: repo.StoredDuration, sign: 1 | -1) {
    const series = d.kind === 'resolution' ? [SERIES.resolution] : d.first ? [SERIES.response, SERIES.firstResponse] : [SERIES.response];
    for (const [unit, start] of periodsOf(d.endedAt)) {
      for (const s of series) {
        // The primary key's order (unit, start, series, bucket), so sorting the keys sorts the rows.
        const key = `${unit}|${start}|${s}|${String(d.bucket).padStart(4, '0')}`;
        const row = this.histogram.get(key) ?? { unit, start, series: s, bucket: d.bucket, n: 0, sumMs: 0 };
        row.n += sign;
        row.sumMs += sign * d.ms;
        this.histogram.set(key, row);
      }
    }
    if (d.kind === 'response' && d.userId) this.users.add(d.endedAt, d.userId, { responses: sign, responseMs: sign * d.ms });
  }

  histogramRows() {
    return [...this.histogram.entries()]
      .filter(([, r]) => r.n !== 0 || r.sumMs !== 0)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([, r]) => r);
  }
}
