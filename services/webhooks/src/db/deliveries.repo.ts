import { randomUUID } from 'node:crypto';
import { isUuid, withTransaction, type Queryable } from '@crm/db';
import type { Pool } from 'pg';
import type { AttemptResult } from '../delivery/sender';
import { feedCtes, feedValues, waitForFanOutWrites, type FeedEvent } from './feed.repo';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';
export type AttemptTrigger = 'auto' | 'manual' | 'test';

export interface DeliveryRow {
  id: string;
  org_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  retries: number;
  next_attempt_at: Date | null;
  manual: boolean;
  one_shot: boolean;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  delivered_at: Date | null;
  traceparent: string | null;
  /** The replay this delivery belongs to (the event sent again); null for the event's own delivery. */
  replay_id: string | null;
}

export interface AttemptRow {
  id: string;
  delivery_id: string;
  attempt: number;
  trigger: AttemptTrigger;
  started_at: Date;
  duration_ms: number;
  status_code: number | null;
  ok: boolean;
  error: string | null;
  response_body: string;
  response_truncated: boolean;
}

/** A claimed delivery with what an attempt needs from its endpoint. */
export interface ClaimedDelivery extends DeliveryRow {
  url: string;
  secret_enc: string;
}

/**
 * NOTIFY channel on which new due deliveries are announced. Channels are per database and this service owns its
 * database, so a fixed name is enough. A payload names one endpoint and some of its new deliveries:
 * `<webhook id>:<delivery id>,<delivery id>,...`, so a worker claims only what that endpoint has room for.
 */
export const DUE_CHANNEL = 'webhook_deliveries_due';

/**
 * Ids per NOTIFY payload: an endpoint id, a colon and 200 delivery ids with their commas are 7,436 bytes, under
 * PostgreSQL's 8,000-byte limit on a payload. An endpoint with more new rows in one batch gets several notifications.
 */
export const IDS_PER_NOTIFICATION = 200;

export interface Announcement {
  /** The endpoint the deliveries are for; undefined for a payload of ids alone (an instance of an earlier version). */
  webhookId?: string;
  ids: string[];
}

/** Reads a payload of DUE_CHANNEL; anything that is not a UUID is dropped before it can reach SQL. */
export function parseAnnouncement(payload: string): Announcement {
  const colon = payload.indexOf(':');
  const webhookId = colon >= 0 ? payload.slice(0, colon) : undefined;
  const ids = payload
    .slice(colon + 1)
    .split(',')
    .filter(isUuid);
  return webhookId !== undefined && isUuid(webhookId) ? { webhookId, ids } : { ids };
}

export interface FanOutEvent {
  orgId: string;
  eventId: string;
  type: string;
  payload: string;
  /** The consumed event's trace context, continued by every attempt; without one each attempt starts a trace. */
  traceparent?: string | null;
}

/** A delivery a batch of events calls for, before it is written: the event (an index into the batch) and its endpoint. */
export interface FanOutTarget {
  /** Index of the event in the batch. */
  event: number;
  webhook_id: string;
  url: string;
  secret_enc: string;
}

// The deliveries a batch of events calls for: each active endpoint of the event's org subscribed to its type, unless
// the endpoint already has a delivery of that event (a redelivered or republished event adds nothing). A read: the
// caller may make first attempts before anything is written (insertFanOut). Oldest event first, an org's endpoints in
// the order they were made. An event repeated within the batch is planned once. The lookup is a LATERAL … LIMIT 1, not
// NOT EXISTS: as an anti join it was planned through the log index on a table not yet analyzed (a service's first
// minute); this form is planned through the unique (webhook_id, event_id).
// Not a named statement: planned on every call, with the table as it is. A plan cached in a service's first seconds
// (an empty table) looks deliveries up through the log index even as written (and as not yet analyzed), reading every
// delivery of the endpoint for each event.
const PLAN_FAN_OUT = {
  text: `SELECT p.event, p.webhook_id, p.url, p.secret_enc FROM (
           SELECT DISTINCT ON (e.event_id, s.id) (e.ord - 1)::int AS event, s.id AS webhook_id, s.url, s.secret_enc, s.created_at
             FROM unnest($1::uuid[], $2::text[], $3::text[]) WITH ORDINALITY AS e (org_id, event_id, type, ord)
             JOIN webhook_settings s ON s.org_id = e.org_id AND s.active AND e.type = ANY (s.events)
             LEFT JOIN LATERAL (SELECT true AS found FROM webhook_deliveries d WHERE d.webhook_id = s.id AND d.event_id = e.event_id AND d.replay_id IS NULL LIMIT 1) x ON true
            WHERE x.found IS NULL
            ORDER BY e.event_id, s.id, e.ord
         ) p
         ORDER BY p.event, p.created_at, p.webhook_id`,
};

export async function planFanOut(db: Queryable, events: FanOutEvent[]): Promise<FanOutTarget[]> {
  if (events.length === 0) return [];
  const { rows } = await db.query<FanOutTarget>({
    ...PLAN_FAN_OUT,
    values: [events.map((e) => e.orgId), events.map((e) => e.eventId), events.map((e) => e.type)],
  });
  return rows;
}

/**
 * How a planned delivery is written: `succeeded` (its first attempt, made before the row, succeeded: the row is
 * written once, finished, with that attempt), `leased` (a first attempt is in flight or failed: this instance records
 * it, as a claim's), `due` (nobody has it yet: announced, any instance claims it).
 */
export type NewDeliveryState = 'succeeded' | 'leased' | 'due';

export interface NewDelivery {
  id: string;
  event: FanOutEvent;
  webhookId: string;
  state: NewDeliveryState;
  /** The first attempt of a `succeeded` delivery. */
  result?: AttemptResult;
}

// Writes a batch's deliveries, each in its state, in one statement: a succeeded one with its attempt (and its endpoint's
// failure run closed), a leased one invisible to claims for the lease, a due one announced by pg_notify in the same
// statement (its own transaction), by endpoint: PostgreSQL delivers a notification only at commit, so a worker never
// hears of a row it cannot see yet, and every instance hears it. The unique (webhook_id, event_id) makes a delivery
// planned twice (two instances with copies of one event) a no-op: only the rows written are returned. An endpoint
// switched off since the plan gets only its successes (they were delivered), as an event consumed after the switch
// would get nothing; a deleted one gets nothing (the attempt of a row not written is not logged).
// The batch's events are appended to the event feed in the same statement (one commit for both; feed.repo feedCtes):
// every row of `input` waits for `feed_lock`, so the feed's lock is the first thing the statement takes and no two
// fan-outs can each hold a row the other waits for. The lock is taken whenever there are rows, and each row's endpoint
// is checked active as committed after it (webhook_active_now, migration 005), not as the statement's snapshot saw it:
// a switch-off committed while the write waited is seen, and one committed after it is followed by
// failPendingAfterWrites, which waits for the lock.
const INSERT_FAN_OUT = {
  name: 'webhooks_insert_fan_out',
  text: `WITH ${feedCtes(15, 'cardinality($1::uuid[]) > 0')}, input AS (
           SELECT t.* FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                                  $9::timestamptz[], $10::int[], $11::int[], $12::text[], $13::bool[]) WITH ORDINALITY
             AS t (id, org_id, webhook_id, event_id, type, payload, traceparent, state, started_at, duration_ms, status_code, response_body, truncated, ord)
             LEFT JOIN feed_lock ON true
         ), ins AS (
           INSERT INTO webhook_deliveries (id, org_id, webhook_id, event_id, event_type, payload, status, attempts, next_attempt_at, last_status_code, delivered_at, traceparent)
           SELECT i.id, i.org_id, i.webhook_id, i.event_id, i.type, i.payload,
                  CASE WHEN i.state = 'succeeded' THEN 'succeeded' ELSE 'pending' END,
                  CASE WHEN i.state = 'succeeded' THEN 1 ELSE 0 END,
                  CASE i.state WHEN 'succeeded' THEN NULL WHEN 'leased' THEN now() + $14 * interval '1 millisecond' ELSE now() END,
                  CASE WHEN i.state = 'succeeded' THEN i.status_code END,
                  CASE WHEN i.state = 'succeeded' THEN now() END,
                  i.traceparent
             FROM input i JOIN webhook_settings s ON s.id = i.webhook_id
            WHERE i.state = 'succeeded' OR webhook_active_now(s.id)
            ORDER BY i.ord
           ON CONFLICT (webhook_id, event_id) WHERE replay_id IS NULL DO NOTHING
           RETURNING id, webhook_id, status, next_attempt_at
         ), attempt AS (
           INSERT INTO webhook_attempts (id, org_id, delivery_id, attempt, trigger, started_at, duration_ms, status_code, ok, error, response_body, response_truncated)
           SELECT gen_random_uuid(), i.org_id, i.id, 1, 'auto', i.started_at, i.duration_ms, i.status_code, true, NULL, i.response_body, i.truncated
             FROM input i JOIN ins ON ins.id = i.id
            WHERE ins.status = 'succeeded'
         ), recovered AS (
           UPDATE webhook_settings s SET failing_since = NULL
             FROM (SELECT DISTINCT webhook_id FROM ins WHERE status = 'succeeded') x
            WHERE s.id = x.webhook_id AND s.failing_since IS NOT NULL
         ), announced AS (
           SELECT pg_notify('${DUE_CHANNEL}', webhook_id::text || ':' || string_agg(id::text, ','))
             FROM (SELECT id, webhook_id, (row_number() OVER (PARTITION BY webhook_id) - 1) / ${IDS_PER_NOTIFICATION} AS chunk
                     FROM ins WHERE status = 'pending' AND next_attempt_at <= now()) numbered
            GROUP BY webhook_id, chunk
         )
         SELECT (SELECT count(*) FROM announced) + (SELECT count(*) FROM feed_announced) AS notifications, ARRAY(SELECT id FROM ins) AS written`,
};

/**
 * Write planned deliveries (see NewDeliveryState) and append `feed` to the event feed; returns the ids written (a
 * delivery that already existed is not).
 */
export async function insertFanOut(db: Queryable, rows: NewDelivery[], leaseMs: number, feed: FeedEvent[] = []): Promise<Set<string>> {
  if (rows.length === 0 && feed.length === 0) return new Set();
  const col = <V>(f: (d: NewDelivery) => V) => rows.map(f);
  const done = (d: NewDelivery) => (d.state === 'succeeded' ? d.result : undefined);
  const { rows: out } = await db.query<{ written: string[] }>({
    ...INSERT_FAN_OUT,
    values: [
      col((d) => d.id),
      col((d) => d.event.orgId),
      col((d) => d.webhookId),
      col((d) => d.event.eventId),
      col((d) => d.event.type),
      col((d) => d.event.payload),
      col((d) => d.event.traceparent ?? null),
      col((d) => d.state),
      col((d) => done(d)?.startedAt ?? null),
      col((d) => done(d)?.durationMs ?? null),
      col((d) => done(d)?.statusCode ?? null),
      col((d) => done(d)?.responseBody ?? null),
      col((d) => done(d)?.responseBodyTruncated ?? null),
      leaseMs,
      ...feedValues(feed),
    ],
  });
  return new Set(out[0]?.written ?? []);
}

/** Plan and write the deliveries of a batch of events, every one due and announced; returns how many were new. */
export async function fanOut(db: Queryable, events: FanOutEvent[]): Promise<number> {
  const targets = await planFanOut(db, events);
  const rows = targets.map((t): NewDelivery => ({ id: randomUUID(), event: events[t.event], webhookId: t.webhook_id, state: 'due' }));
  return (await insertFanOut(db, rows, 0)).size;
}

/** Announce one endpoint's deliveries made due now outside the fan-out (a manual redelivery), so any instance takes them. */
export async function announceDue(db: Queryable, webhookId: string, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += IDS_PER_NOTIFICATION) {
    await db.query('SELECT pg_notify($1, $2)', [DUE_CHANNEL, `${webhookId}:${ids.slice(i, i + IDS_PER_NOTIFICATION).join(',')}`]);
  }
}

/**
 * Claim due rows of active endpoints (an inactive one's wait until it is switched on again). SKIP LOCKED
 * lets several workers (replicas) share the queue. The claim pushes next_attempt_at forward by a lease:
 * should this worker die mid-attempt, the row becomes due again when the lease ends and another attempt is
 * made (at-least-once); until then no other worker can claim it, because it is no longer due.
 *
 * Per-endpoint bound: the caller says how many attempts it has in flight per endpoint (`busy`); rows of an
 * endpoint already at `perEndpoint` are not even scanned, and of the others at most the free slots are
 * taken (oldest first), so a slow endpoint with a backlog holds `perEndpoint` slots, never all of them,
 * and no claimed row waits in memory while its lease runs. FOR UPDATE cannot sit beside a window
 * function, so candidates are locked first and ranked after; candidates not taken are unlocked at the
 * end of the statement. `scanned` (candidates seen) tells the caller whether due rows were left behind.
 */
function claimStatement(name: string, which: string) {
  return {
    name,
    text: `WITH cand AS (
             SELECT d.id, d.webhook_id, d.next_attempt_at
               FROM webhook_deliveries d JOIN webhook_settings s ON s.id = d.webhook_id AND s.active
              WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND d.webhook_id <> ALL ($4::uuid[]) ${which}
              ORDER BY d.next_attempt_at
              LIMIT $5
              FOR UPDATE OF d SKIP LOCKED
           ), ranked AS (
             SELECT c.id, c.next_attempt_at,
                    coalesce(b.n, 0) + row_number() OVER (PARTITION BY c.webhook_id ORDER BY c.next_attempt_at) AS slot
               FROM cand c LEFT JOIN unnest($6::uuid[], $7::int[]) AS b (webhook_id, n) ON b.webhook_id = c.webhook_id
           ), chosen AS (
             SELECT id FROM ranked WHERE slot <= $3 ORDER BY next_attempt_at LIMIT $1
           ), claimed AS (
             UPDATE webhook_deliveries d SET next_attempt_at = now() + $2 * interval '1 millisecond'
               FROM chosen WHERE d.id = chosen.id
             RETURNING d.*
           )
           SELECT k.scanned, c.*, s.url, s.secret_enc
             FROM (SELECT count(*)::int AS scanned FROM cand) k
             LEFT JOIN (claimed c JOIN webhook_settings s ON s.id = c.webhook_id) ON true`,
  };
}
const CLAIM_DUE = claimStatement('webhooks_claim_due', '');
const CLAIM_IDS = claimStatement('webhooks_claim_ids', 'AND d.id = ANY ($8::uuid[])');

/**
 * Claim the oldest due rows of given endpoints, at most `n` of each (its free slots): new deliveries and retries
 * alike, in the order they fell due. Endpoints switched off are skipped.
 */
const CLAIM_ENDPOINTS = {
  name: 'webhooks_claim_endpoints',
  text: `WITH want AS (
           SELECT w.webhook_id, w.n
             FROM unnest($1::uuid[], $2::int[]) AS w (webhook_id, n)
             JOIN webhook_settings s ON s.id = w.webhook_id AND s.active
         ), cand AS (
           SELECT c.id FROM want w CROSS JOIN LATERAL (
             SELECT d.id FROM webhook_deliveries d
              WHERE d.webhook_id = w.webhook_id AND d.status = 'pending' AND d.next_attempt_at <= now()
              ORDER BY d.next_attempt_at
              LIMIT w.n
              FOR UPDATE SKIP LOCKED
           ) c
         ), claimed AS (
           UPDATE webhook_deliveries d SET next_attempt_at = now() + $3 * interval '1 millisecond'
             FROM cand WHERE d.id = cand.id
           RETURNING d.*
         )
         SELECT c.*, s.url, s.secret_enc FROM claimed c JOIN webhook_settings s ON s.id = c.webhook_id`,
};

export async function claimEndpoints(db: Queryable, wants: ReadonlyMap<string, number>, leaseMs: number): Promise<ClaimedDelivery[]> {
  if (wants.size === 0) return [];
  const { rows } = await db.query<ClaimedDelivery>({ ...CLAIM_ENDPOINTS, values: [[...wants.keys()], [...wants.values()], leaseMs] });
  return rows;
}

export interface ClaimRequest {
  /** Rows wanted at most (free slots of the instance). */
  limit: number;
  leaseMs: number;
  /** Attempts in flight at once per endpoint. */
  perEndpoint: number;
  /** Attempts this instance has in flight per endpoint id. */
  busy: ReadonlyMap<string, number>;
  /** Candidates looked at (the due rows, oldest first); ignored with `ids`. */
  scan: number;
  /** Only these rows (just announced), when they are still pending and due. */
  ids?: string[];
  /** Endpoints the general scan leaves out (besides those at their bound): claimed by endpoint instead. */
  skip?: string[];
}

export interface ClaimResult {
  rows: ClaimedDelivery[];
  /** Due candidates seen; more than rows.length means some were left for lack of a slot. */
  scanned: number;
}

export async function claim(db: Queryable, r: ClaimRequest): Promise<ClaimResult> {
  // The general scan skips endpoints at their bound (their backlog would fill it); announced ids are few,
  // so every one is scanned and ranked, and one left for lack of a slot still counts in `scanned`.
  const full: string[] = [...(r.ids ? [] : (r.skip ?? []))];
  const busyIds: string[] = [];
  const busyCounts: number[] = [];
  for (const [id, n] of r.busy) {
    if (!r.ids && n >= r.perEndpoint) full.push(id);
    else if (n > 0) {
      busyIds.push(id);
      busyCounts.push(n);
    }
  }
  const common = [r.limit, r.leaseMs, r.perEndpoint, full];
  // One row at least: `scanned`, with the claimed delivery's columns or NULLs when none was claimed.
  const { rows } = r.ids
    ? await db.query<ClaimedDelivery & { scanned: number }>({ ...CLAIM_IDS, values: [...common, r.ids.length, busyIds, busyCounts, r.ids] })
    : await db.query<ClaimedDelivery & { scanned: number }>({ ...CLAIM_DUE, values: [...common, r.scan, busyIds, busyCounts] });
  return { rows: rows.filter((row) => row.id !== null), scanned: rows[0]?.scanned ?? 0 };
}

const INSERT_ATTEMPT = `INSERT INTO webhook_attempts (id, org_id, delivery_id, attempt, trigger, started_at, duration_ms, status_code, ok, error, response_body, response_truncated)
                        VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`;

function attemptValues(orgId: string, deliveryId: string, attempt: number, trigger: AttemptTrigger, r: AttemptResult): unknown[] {
  return [orgId, deliveryId, attempt, trigger, r.startedAt, r.durationMs, r.statusCode, r.ok, r.error, r.responseBody, r.responseBodyTruncated];
}

export interface Success {
  delivery: DeliveryRow;
  trigger: AttemptTrigger;
  result: AttemptResult;
}

/**
 * Record successful attempts, many in one round trip: the attempt rows, the deliveries done, the
 * endpoints' failure runs closed. `attempts = attempt - 1` applies each only to the claim it belongs to
 * (a delivery re-claimed after a lapsed lease is recorded once).
 */
const SUCCEEDED = {
  name: 'webhooks_succeeded',
  text: `WITH input AS (
           SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::text[], $5::timestamptz[], $6::int[], $7::int[], $8::text[], $9::bool[])
             AS t (id, org_id, attempt, trigger, started_at, duration_ms, status_code, response_body, truncated)
         ), d AS (
           UPDATE webhook_deliveries w SET status = 'succeeded', attempts = i.attempt, next_attempt_at = NULL, manual = false, one_shot = false,
                  last_status_code = i.status_code, last_error = NULL, delivered_at = now(), updated_at = now()
             FROM input i
            WHERE w.id = i.id AND w.status = 'pending' AND w.attempts = i.attempt - 1
           RETURNING w.id, w.webhook_id
         ), a AS (
           INSERT INTO webhook_attempts (id, org_id, delivery_id, attempt, trigger, started_at, duration_ms, status_code, ok, error, response_body, response_truncated)
           SELECT gen_random_uuid(), i.org_id, i.id, i.attempt, i.trigger, i.started_at, i.duration_ms, i.status_code, true, NULL, i.response_body, i.truncated
             FROM input i JOIN d ON d.id = i.id
         )
         UPDATE webhook_settings s SET failing_since = NULL
           FROM (SELECT DISTINCT webhook_id FROM d) x
          WHERE s.id = x.webhook_id AND s.failing_since IS NOT NULL`,
};

export async function recordSuccesses(db: Queryable, items: Success[]): Promise<void> {
  const col = <V>(f: (s: Success) => V) => items.map(f);
  await db.query({
    ...SUCCEEDED,
    values: [
      col((s) => s.delivery.id),
      col((s) => s.delivery.org_id),
      col((s) => s.delivery.attempts + 1),
      col((s) => s.trigger),
      col((s) => s.result.startedAt),
      col((s) => s.result.durationMs),
      col((s) => s.result.statusCode),
      col((s) => s.result.responseBody),
      col((s) => s.result.responseBodyTruncated),
    ],
  });
}

/** A failed attempt: log it and either schedule the next one (`retryInMs`) or give up (`undefined`). */
export async function recordFailure(
  db: Queryable,
  d: DeliveryRow,
  trigger: AttemptTrigger,
  r: AttemptResult,
  retryInMs: number | undefined,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE webhook_deliveries SET attempts = $2, status = $3, retries = retries + $4,
            next_attempt_at = CASE WHEN $3 = 'pending' THEN now() + $5 * interval '1 millisecond' END,
            manual = false, one_shot = false, last_status_code = $6, last_error = $7, updated_at = now()
      WHERE id = $1 AND status = 'pending' AND attempts = $2 - 1`,
    [d.id, d.attempts + 1, retryInMs === undefined ? 'failed' : 'pending', retryInMs === undefined ? 0 : 1, retryInMs ?? 0, r.statusCode, r.error],
  );
  if (!rowCount) return false;
  await db.query(INSERT_ATTEMPT, attemptValues(d.org_id, d.id, d.attempts + 1, trigger, r));
  return true;
}

/** An endpoint was disabled: what was still waiting for it fails now (it can be redelivered later). */
export async function failPending(db: Queryable, webhookId: string, reason: string): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, last_error = $2, updated_at = now()
      WHERE webhook_id = $1 AND status = 'pending'`,
    [webhookId, reason],
  );
  return rowCount ?? 0;
}

/**
 * failPending once every fan-out write under way has committed: called after a switch-off commits. A write whose
 * statement began before the switch-off and went first (it held the feed lock) committed rows pending for the endpoint;
 * this waits for it and fails them. A write after this one sees the switch-off (INSERT_FAN_OUT) and writes none.
 */
export async function failPendingAfterWrites(pool: Pool, webhookId: string, reason: string): Promise<number> {
  return withTransaction(pool, async (db) => {
    await waitForFanOutWrites(db);
    return failPending(db, webhookId, reason);
  });
}

/** A test send: done synchronously, logged as a finished delivery with its one attempt. */
export async function insertFinished(
  db: Queryable,
  d: { id: string; orgId: string; webhookId: string; eventId: string; type: string; payload: string },
  trigger: AttemptTrigger,
  r: AttemptResult,
): Promise<void> {
  await db.query(
    `INSERT INTO webhook_deliveries (id, org_id, webhook_id, event_id, event_type, payload, status, attempts, last_status_code, last_error, delivered_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9, CASE WHEN $7 = 'succeeded' THEN now() END)`,
    [d.id, d.orgId, d.webhookId, d.eventId, d.type, d.payload, r.ok ? 'succeeded' : 'failed', r.statusCode, r.error],
  );
  await db.query(INSERT_ATTEMPT, attemptValues(d.orgId, d.id, 1, trigger, r));
}

export async function findInOrg(db: Queryable, orgId: string, id: string): Promise<DeliveryRow | undefined> {
  const { rows } = await db.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE org_id = $1 AND id = $2', [orgId, id]);
  return rows[0];
}

/**
 * Manual redelivery. A pending delivery is just made due now (its schedule goes on should this attempt
 * fail); a finished one gets one more attempt, without automatic retries after it.
 */
export async function requestRedelivery(db: Queryable, orgId: string, id: string): Promise<DeliveryRow | undefined> {
  const { rows } = await db.query<DeliveryRow>(
    `UPDATE webhook_deliveries SET one_shot = (status <> 'pending'), status = 'pending', manual = true,
            next_attempt_at = now(), updated_at = now()
      WHERE org_id = $1 AND id = $2
     RETURNING *`,
    [orgId, id],
  );
  return rows[0];
}

export async function listForWebhook(
  db: Queryable,
  orgId: string,
  webhookId: string,
  f: { status?: string; eventType?: string; limit: number; offset: number },
): Promise<{ rows: DeliveryRow[]; total: number }> {
  const where = ['org_id = $1', 'webhook_id = $2'];
  const values: unknown[] = [orgId, webhookId];
  if (f.status) {
    values.push(f.status);
    where.push(`status = $${values.length}`);
  }
  if (f.eventType) {
    values.push(f.eventType);
    where.push(`event_type = $${values.length}`);
  }
  const clause = where.join(' AND ');
  const [page, total] = await Promise.all([
    db.query<DeliveryRow>(
      `SELECT * FROM webhook_deliveries WHERE ${clause} ORDER BY created_at DESC, id LIMIT ${f.limit} OFFSET ${f.offset}`,
      values,
    ),
    db.query<{ n: number }>(`SELECT count(*) AS n FROM webhook_deliveries WHERE ${clause}`, values),
  ]);
  return { rows: page.rows, total: total.rows[0].n };
}

export async function attemptsOf(db: Queryable, orgId: string, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  const { rows } = await db.query<AttemptRow>(
    'SELECT * FROM webhook_attempts WHERE org_id = $1 AND delivery_id = ANY ($2::uuid[]) ORDER BY delivery_id, attempt',
    [orgId, deliveryIds],
  );
  return rows;
}

/** Delete finished deliveries (with their attempts) older than the retention, a batch at a time. */
export async function pruneFinished(db: Queryable, olderThanMs: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM webhook_deliveries WHERE id IN (
       SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < now() - $1 * interval '1 millisecond' LIMIT 5000)`,
    [olderThanMs],
  );
  return rowCount ?? 0;
}
