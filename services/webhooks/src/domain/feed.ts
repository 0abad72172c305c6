import { iso } from '@crm/db';
import { AppError, invalid, requireCan, type OrgContext } from '@crm/grpc-kit';
import * as feed from '../db/feed.repo';
import type { Deps } from '../deps';
import { decodeCursor, encodeCursor, type FeedCursor } from './feed-cursor';
import { validateTypeFilter } from './validation';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 500;
export const MAX_WAIT_SECONDS = 30;
const DAY_MS = 86_400_000;
/**
 * How far before the read a cursor at the end of the feed is dated. An append's rows are stamped when written and
 * seen when committed, a few milliseconds later, so a reader up to date now may still get rows stamped a moment ago;
 * dating its cursor a minute back keeps the expiry check ahead of the sweep for them.
 */
const END_CURSOR_MARGIN_MS = 60_000;

export const retentionMsOf = (deps: Pick<Deps, 'config'>) => deps.config.EVENT_FEED_RETENTION_DAYS * DAY_MS;

export const cursorExpired = () =>
  new AppError('failed_precondition', 'The cursor is older than the event feed keeps events; start again without `after`', {
    code: 'cursor_expired',
  });

export interface ReadRequest {
  after: string;
  types: string[];
  limit: number;
  waitSeconds: number;
}

/**
 * One page of the organization's feed after a cursor, oldest first. An org API key (a call without a user) reads
 * it as it reads every public resource; a user needs settings:edit (the events carry every conversation's data).
 * An empty page with `waitSeconds` is held until an event of the org is appended, then read again (an append of
 * other types only keeps it waiting), until the wait ends.
 */
export async function read(deps: Deps, ctx: OrgContext, req: ReadRequest) {
  if (ctx.userId) requireCan(ctx, 'settings:edit');
  const types = validateTypeFilter(req.types);
  const limit = Math.min(MAX_LIMIT, Math.max(1, req.limit || DEFAULT_LIMIT));
  const waitMs = Math.min(MAX_WAIT_SECONDS, Math.max(0, req.waitSeconds || 0)) * 1000;
  let after: FeedCursor | undefined;
  if (req.after) {
    after = decodeCursor(req.after);
    if (!after) throw invalid('after', 'is not a valid cursor; pass nextCursor exactly as a page returned it');
  }
  const position = after?.position ?? 0n;
  const retentionMs = retentionMsOf(deps);
  const deadline = Date.now() + waitMs;
  for (let first = true; ; first = false) {
    // Before the look at the table: an append committed between the look and the wait still wakes this reader.
    const waiter = deps.feedWaiters.next(ctx.orgId, deadline - Date.now());
    try {
      const { rows, now } = await feed.readPage(deps.pool, ctx.orgId, position.toString(), types, limit);
      if (first && after && after.at.getTime() < now.getTime() - retentionMs) throw cursorExpired();
      if (rows.length > 0 || !waiter) return page(rows, limit, position, after, now);
      await waiter.woken;
    } finally {
      waiter?.cancel();
    }
  }
}

function page(rows: feed.FeedRow[], limit: number, position: bigint, after: FeedCursor | undefined, now: Date) {
  const endAt = new Date(Math.max(now.getTime() - END_CURSOR_MARGIN_MS, after?.at.getTime() ?? 0));
  const last = rows.at(-1);
  // A full page may have more behind it: its cursor is dated by its last row. A shorter one reached the end of the
  // feed: the reader is up to date as of the read.
  const next: FeedCursor = last
    ? { position: BigInt(last.position), at: rows.length === limit ? last.stored_at : new Date(Math.max(endAt.getTime(), last.stored_at.getTime())) }
    : { position, at: endAt };
  return {
    events: rows.map((r) => ({ id: r.event_id, type: r.event_type, occurredAt: iso(r.occurred_at), data: r.data })),
    nextCursor: encodeCursor(next),
  };
}
