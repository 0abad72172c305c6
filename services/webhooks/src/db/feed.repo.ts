import type { Queryable } from '@crm/db';

/** A public event as the feed keeps it (the fan-out's event, deliveries.repo FanOutEvent, and when it occurred). */
export interface FeedEvent {
  orgId: string;
  eventId: string;
  type: string;
  /** The webhook body its deliveries send. */
  payload: string;
  occurredAt: string;
}

/**
 * NOTIFY channel of feed appends; the payload is the organization's id, one notification per organization per
 * committed batch (PostgreSQL also folds identical ones of a transaction). Long-polling reads wait on it
 * (feed/feed-waiters.ts), on every instance.
 */
export const FEED_CHANNEL = 'event_feed_appended';

/** The retention sweep's channel: nothing needs to notify it (rows fall due by time), but an operator or a test may. */
export const FEED_SWEEP_CHANNEL = 'event_feed_sweep';

/**
 * The transaction-level advisory lock every feed append takes before its rows get their positions. Appends commit
 * one after the other, so positions are visible in order: a reader that saw position n never later finds a smaller
 * one committed (which a cursor past it would skip for ever). Held for the rest of the fan-out's one statement, a few
 * milliseconds; only instances appending at the same moment ever wait on it.
 */
const FEED_LOCK_KEY = 31_001;

/** Wait for every fan-out write under way (they hold the feed lock for their statement), holding it until commit. */
export async function waitForFanOutWrites(db: Queryable): Promise<void> {
  await db.query('SELECT pg_advisory_xact_lock($1)', [FEED_LOCK_KEY]);
}

/**
 * CTEs appending the feed rows given as parameters $p..$p+4 (org ids, event ids, types, occurred-at times, payloads)
 * and announcing them, for the fan-out's statement (deliveries.repo INSERT_FAN_OUT) or alone (APPEND). `feed_lock`
 * takes the lock before any row is produced (any join needs a row of it first), when there are feed rows or
 * `lockWhen` (SQL) holds;
 * `feed_announced` must be read by the statement's main query. `stored_at` is the clock after the lock, so it grows
 * with the position.
 */
export function feedCtes(p: number, lockWhen = 'false'): string {
  return `feed_lock AS (
           SELECT pg_advisory_xact_lock(${FEED_LOCK_KEY}) AS locked WHERE cardinality($${p}::uuid[]) > 0 OR ${lockWhen}
         ), feed_input AS (
           SELECT f.* FROM unnest($${p}::uuid[], $${p + 1}::text[], $${p + 2}::text[], $${p + 3}::timestamptz[], $${p + 4}::text[]) WITH ORDINALITY
             AS f (org_id, event_id, type, occurred_at, payload, ord)
             CROSS JOIN feed_lock
         ), feed AS (
           INSERT INTO event_feed (org_id, event_id, event_type, occurred_at, payload, stored_at)
           SELECT org_id, event_id, type, occurred_at, payload, clock_timestamp() FROM feed_input ORDER BY ord
           ON CONFLICT (org_id, event_id) DO NOTHING
           RETURNING org_id
         ), feed_announced AS (
           SELECT pg_notify('${FEED_CHANNEL}', org_id::text) FROM (SELECT DISTINCT org_id FROM feed) o
         )`;
}

/** The values of feedCtes' parameters, in order. */
export function feedValues(events: FeedEvent[]): unknown[] {
  return [
    events.map((e) => e.orgId),
    events.map((e) => e.eventId),
    events.map((e) => e.type),
    events.map((e) => e.occurredAt),
    events.map((e) => e.payload),
  ];
}

const APPEND = {
  name: 'webhooks_feed_append',
  text: `WITH ${feedCtes(1)} SELECT count(*) AS notifications FROM feed_announced`,
};

/** Append a batch's events to the feed alone (no endpoint called for a delivery): one statement, one commit. */
export async function append(db: Queryable, events: FeedEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db.query({ ...APPEND, values: feedValues(events) });
}

export interface FeedRow {
  position: string;
  event_id: string;
  event_type: string;
  occurred_at: Date;
  stored_at: Date;
  /** The `data` of the webhook body, as JSON text exactly as sent. */
  data: string;
}

/**
 * One page of an organization's feed after `after` (a position), oldest first, optionally of some types only. `now`:
 * the database clock when the page was read (a cursor at the end of the feed is dated from it).
 */
const READ = {
  name: 'webhooks_feed_read',
  text: `SELECT f.position::text AS position, f.event_id, f.event_type, f.occurred_at, f.stored_at, (f.payload::json -> 'data')::text AS data
           FROM event_feed f
          WHERE f.org_id = $1 AND f.position > $2::bigint AND (cardinality($3::text[]) = 0 OR f.event_type = ANY ($3::text[]))
          ORDER BY f.position
          LIMIT $4`,
};

export async function readPage(db: Queryable, orgId: string, after: string, types: string[], limit: number): Promise<{ rows: FeedRow[]; now: Date }> {
  const [page, clock] = await Promise.all([
    db.query<FeedRow>({ ...READ, values: [orgId, after, types, limit] }),
    db.query<{ now: Date }>('SELECT clock_timestamp() AS now'),
  ]);
  return { rows: page.rows, now: clock.rows[0].now };
}

/** The database clock (a cursor's age is judged on it, as rows' stored_at are written by it). */
export async function clock(db: Queryable): Promise<Date> {
  return (await db.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0].now;
}

/** Rows per sweep statement: one sweep deletes in batches of this many. */
export const SWEEP_BATCH = 5_000;

/** Delete up to SWEEP_BATCH rows stored longer ago than the retention; returns how many went. */
export async function deleteExpired(db: Queryable, retentionMs: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM event_feed WHERE (org_id, position) IN (
       SELECT org_id, position FROM event_feed WHERE stored_at < now() - $1 * interval '1 millisecond' ORDER BY stored_at LIMIT ${SWEEP_BATCH})`,
    [retentionMs],
  );
  return rowCount ?? 0;
}

/**
 * How long until the oldest row passes the retention (0 or less: now). An empty feed answers the retention itself:
 * a row written now falls due no sooner, so the sweep needs no notification of new rows.
 */
export async function nextSweepDueInMs(db: Queryable, retentionMs: number): Promise<number> {
  const { rows } = await db.query<{ ms: string | null }>(
    `SELECT extract(epoch FROM (min(stored_at) + $1 * interval '1 millisecond') - now()) * 1000 AS ms FROM event_feed`,
    [retentionMs],
  );
  return rows[0].ms === null ? retentionMs : Number(rows[0].ms);
}
