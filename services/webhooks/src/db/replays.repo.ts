import type { Queryable } from '@crm/db';

/** NOTIFY channel of the replay pump: a new replay is announced so an instance starts it at once. */
export const REPLAYS_DUE_CHANNEL = 'webhook_replays_due';

export interface ReplayRow {
  id: string;
  org_id: string;
  webhook_id: string;
  from_at: Date;
  to_at: Date;
  types: string[];
  count: number;
  next_release_at: Date | null;
  created_at: Date;
}

export interface NewReplay {
  id: string;
  orgId: string;
  webhookId: string;
  from: Date;
  to: Date;
  /** The types asked for (empty: all the endpoint subscribes to), as recorded. */
  types: string[];
  /** The types delivered: the endpoint's subscriptions, narrowed to `types` when given. */
  deliver: string[];
}

/**
 * A replay and its deliveries: one pending row per kept event of the window the endpoint takes, with the event's id
 * and the body it was delivered with, not yet due (the pump makes them due a few at a time), one-shot (a failure is
 * final: the replay counts it). Announced to the pump on commit. Returns how many deliveries it holds.
 */
export async function create(db: Queryable, r: NewReplay): Promise<number> {
  await db.query(
    `INSERT INTO webhook_replays (id, org_id, webhook_id, from_at, to_at, types, count, next_release_at)
     VALUES ($1, $2, $3, $4, $5, $6, 0, now())`,
    [r.id, r.orgId, r.webhookId, r.from, r.to, r.types],
  );
  const { rowCount } = await db.query(
    `INSERT INTO webhook_deliveries (id, org_id, webhook_id, event_id, event_type, payload, status, next_attempt_at, one_shot, replay_id, feed_position)
     SELECT gen_random_uuid(), f.org_id, $3, f.event_id, f.event_type, f.payload, 'pending', NULL, true, $1, f.position
       FROM event_feed f
      WHERE f.org_id = $2 AND f.occurred_at >= $4 AND f.occurred_at < $5 AND f.event_type = ANY ($6::text[])`,
    [r.id, r.orgId, r.webhookId, r.from, r.to, r.deliver],
  );
  const count = rowCount ?? 0;
  await db.query(`UPDATE webhook_replays SET count = $2, next_release_at = CASE WHEN $2 > 0 THEN now() END WHERE id = $1`, [r.id, count]);
  if (count > 0) await db.query('SELECT pg_notify($1, $2)', [REPLAYS_DUE_CHANNEL, r.id]);
  return count;
}

export async function findInOrg(db: Queryable, orgId: string, webhookId: string, id: string): Promise<ReplayRow | undefined> {
  const { rows } = await db.query<ReplayRow>('SELECT * FROM webhook_replays WHERE org_id = $1 AND webhook_id = $2 AND id = $3', [
    orgId,
    webhookId,
    id,
  ]);
  return rows[0];
}

/** How a replay's deliveries stand. */
export async function progress(db: Queryable, replayId: string): Promise<{ pending: number; delivered: number; failed: number }> {
  const { rows } = await db.query<{ pending: number; delivered: number; failed: number }>(
    `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*) FILTER (WHERE status = 'succeeded')::int AS delivered,
            count(*) FILTER (WHERE status = 'failed')::int AS failed
       FROM webhook_deliveries WHERE replay_id = $1`,
    [replayId],
  );
  return rows[0];
}

/**
 * Claims replays whose next look is due (SKIP LOCKED: once across instances), pushing that look `tickMs` ahead: the
 * pump's rate, and the lease should this instance die before it releases anything.
 */
export async function claimDue(db: Queryable, limit: number, tickMs: number): Promise<Pick<ReplayRow, 'id' | 'org_id' | 'webhook_id'>[]> {
  const { rows } = await db.query(
    `UPDATE webhook_replays r SET next_release_at = now() + $2 * interval '1 millisecond'
      WHERE r.id IN (SELECT id FROM webhook_replays WHERE next_release_at <= now() ORDER BY next_release_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING r.id, r.org_id, r.webhook_id`,
    [limit, tickMs],
  );
  return rows;
}

/**
 * Makes up to `inFlight` minus what the endpoint already has of replays pending and due (or in flight) of this
 * replay's next deliveries due now, oldest event first, under a lock on the endpoint's row (two replays of one endpoint
 * take turns, so the bound holds across instances). Returns the ids made due and whether any is still waiting;
 * a replay with none left is not looked at again.
 */
export async function release(
  db: Queryable,
  replay: { id: string; webhook_id: string },
  inFlight: number,
): Promise<{ ids: string[]; more: boolean }> {
  await db.query('SELECT 1 FROM webhook_settings WHERE id = $1 FOR UPDATE', [replay.webhook_id]);
  const busy = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries
      WHERE webhook_id = $1 AND status = 'pending' AND replay_id IS NOT NULL AND next_attempt_at IS NOT NULL`,
    [replay.webhook_id],
  );
  const room = Math.max(0, inFlight - busy.rows[0].n);
  const { rows } = await db.query<{ id: string }>(
    `UPDATE webhook_deliveries d SET next_attempt_at = now(), updated_at = now()
      WHERE d.id IN (SELECT id FROM webhook_deliveries
                      WHERE replay_id = $1 AND status = 'pending' AND next_attempt_at IS NULL
                      ORDER BY feed_position LIMIT $2)
     RETURNING d.id`,
    [replay.id, room],
  );
  const left = await db.query<{ more: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE replay_id = $1 AND status = 'pending' AND next_attempt_at IS NULL) AS more`,
    [replay.id],
  );
  const more = left.rows[0].more;
  if (!more) await db.query('UPDATE webhook_replays SET next_release_at = NULL WHERE id = $1', [replay.id]);
  return { ids: rows.map((r) => r.id), more };
}

/** How long until the nearest replay's next look (0 or less: now; null: no replay is releasing). */
export async function nextDueInMs(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ ms: string | null }>(
    `SELECT extract(epoch FROM min(next_release_at) - now()) * 1000 AS ms FROM webhook_replays WHERE next_release_at IS NOT NULL`,
  );
  return rows[0].ms === null ? null : Number(rows[0].ms);
}
