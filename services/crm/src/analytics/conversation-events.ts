import type { PoolClient } from '@crm/db';
import { bucketOf } from './buckets';
import * as repo from './conversations.repo';
import { compareItems, EMPTY_STATE, Item, REPLY, replay } from './turns';
import { periodsOf, UserStatsDeltas } from './user-stats';

/** Histogram series: every response, first responses, resolutions. */
export const SERIES = { response: 1, firstResponse: 2, resolution: 3 } as const;

/**
 * Apply one conversation item (inbound message, reply, archive) inside the consumer's transaction.
 * In order (the usual case) it advances the stored state by one step. An item older than the newest one
 * applied arrived late: the conversation is replayed from all its items and its durations replaced, so the
 * result is the same whatever order the events came in. The conversation row lock serialises events of one
 * conversation handled concurrently.
 */
export async function applyItem(db: PoolClient, orgId: string, conversationId: string, item: Item): Promise<void> {
  if (!(await repo.insertItem(db, orgId, conversationId, item))) return;
  const deltas = new Deltas();
  if (item.kind === REPLY && item.userId) deltas.reply(item.at, item.userId);

  let conv = await repo.lockConversation(db, orgId, conversationId);
  let added: repo.StoredDuration[];
  if (!conv) {
    const { state, durations } = replay(EMPTY_STATE, [item]);
    if (await repo.createConversation(db, orgId, conversationId, item, state)) {
      added = durations.map(stored);
      await finish(db, orgId, conversationId, added, deltas);
      return;
    }
    conv = (await repo.lockConversation(db, orgId, conversationId))!;
  }
  if (compareItems(item, conv.last) > 0) {
    const { state, durations } = replay(conv.state, [item]);
    await repo.saveConversation(db, orgId, conversationId, item, state);
    added = durations.map(stored);
  } else {
    for (const d of await repo.deleteDurations(db, orgId, conversationId)) deltas.duration(d, -1);
    const items = await repo.conversationItems(db, orgId, conversationId);
    const { state, durations } = replay(EMPTY_STATE, items);
    await repo.saveConversation(db, orgId, conversationId, items[items.length - 1], state);
    added = durations.map(stored);
  }
  await finish(db, orgId, conversationId, added, deltas);
}

async function finish(db: PoolClient, orgId: string, conversationId: string, added: repo.StoredDuration[], deltas: Deltas) {
  await repo.insertDurations(db, orgId, conversationId, added);
  for (const d of added) deltas.duration(d, 1);
  await repo.addToHistogram(db, orgId, deltas.histogramRows());
  await deltas.users.apply(db, orgId);
}

function stored(d: ReturnType<typeof replay>['durations'][number]): repo.StoredDuration {
  const ms = d.endedAt - d.startedAt;
  return { ...d, ms, bucket: bucketOf(ms) };
}

/** Changes to the histogram, summed per row (zero changes dropped), and to the user rows. */
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
