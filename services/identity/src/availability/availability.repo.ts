import { iso, type Queryable } from '@crm/db';
import type { AvailabilityStatus } from '@crm/events';

/** Every write that sets or moves an offline due time NOTIFYs here in its transaction: sleeping instances wake. */
export const OFFLINE_DUE_CHANNEL = 'identity_availability_due';

/** The availability columns of a user row (migration 005). */
export interface AvailabilityRow {
  id: string;
  org_id: string;
  availability: AvailabilityStatus;
  availability_chosen: AvailabilityStatus;
  socket_connected: boolean;
  offline_due_at: Date | null;
  availability_updated_at: Date | null;
  created_at: Date;
}

/** A write that may have changed the effective status: the row after it and the status before. */
export interface Changed {
  row: AvailabilityRow;
  previous: AvailabilityStatus;
}

const COLUMNS =
  'u.id, u.org_id, u.availability, u.availability_chosen, u.socket_connected, u.offline_due_at, u.availability_updated_at, u.created_at';

/** The API shape (GET /profile/availability). */
export function toAvailability(r: AvailabilityRow) {
  return {
    status: r.availability,
    chosenStatus: r.availability_chosen,
    connected: r.socket_connected,
    // Never changed: as it has been since the user was created.
    updatedAt: iso(r.availability_updated_at ?? r.created_at),
  };
}

export async function find(db: Queryable, orgId: string, userId: string): Promise<AvailabilityRow | undefined> {
  const { rows } = await db.query<AvailabilityRow>(`SELECT ${COLUMNS} FROM users u WHERE u.id = $1 AND u.org_id = $2`, [userId, orgId]);
  return rows[0];
}

/**
 * Runs `set` (SQL assignments over u) on the user's row, locked, when `condition` holds; answers the row after it and
 * the effective status before it, or undefined when no row matched.
 */
async function change(db: Queryable, orgId: string, userId: string, set: string, args: unknown[], condition = 'true'): Promise<Changed | undefined> {
  const { rows } = await db.query<AvailabilityRow & { previous: AvailabilityStatus }>(
    `WITH before AS (SELECT id, availability FROM users WHERE id = $1 AND org_id = $2 AND ${condition} FOR UPDATE)
     UPDATE users u SET ${set}, availability_updated_at = now()
     FROM before WHERE u.id = before.id
     RETURNING ${COLUMNS}, before.availability AS previous`,
    [userId, orgId, ...args],
  );
  if (!rows[0]) return undefined;
  const { previous, ...row } = rows[0];
  return { row, previous };
}

/**
 * The user's choice. It is also the effective status while they are reachable: a socket connected, or the last one
 * gone less than the offline window ago (its timer waiting); otherwise they stay offline.
 */
export function choose(db: Queryable, orgId: string, userId: string, chosen: AvailabilityStatus): Promise<Changed | undefined> {
  return change(
    db,
    orgId,
    userId,
    `availability_chosen = $3, availability = CASE WHEN u.socket_connected OR u.offline_due_at IS NOT NULL THEN $3 ELSE 'offline' END`,
    [chosen],
  );
}

/** The first socket connected (reported as `seq`): their choice is effective again and no offline timer waits. */
export function connected(db: Queryable, orgId: string, userId: string, seq: number): Promise<Changed | undefined> {
  return change(
    db,
    orgId,
    userId,
    `socket_connected = true, presence_seq = $3, offline_due_at = NULL, availability = u.availability_chosen`,
    [seq],
    'presence_seq < $3',
  );
}

/** The last socket went (reported as `seq`): the effective status stays until the offline timer fires. */
export async function disconnected(db: Queryable, orgId: string, userId: string, seq: number, offlineAfterMs: number): Promise<Changed | undefined> {
  const out = await change(
    db,
    orgId,
    userId,
    `socket_connected = false, presence_seq = $3, offline_due_at = now() + $4 * interval '1 millisecond'`,
    [seq, offlineAfterMs],
    'presence_seq < $3',
  );
  if (out) await db.query(`SELECT pg_notify('${OFFLINE_DUE_CHANNEL}', '')`);
  return out;
}

/**
 * The offline timer's claim: up to `limit` users whose window ran out with no socket back become offline, in one
 * statement (FOR UPDATE SKIP LOCKED: instances share the rows, each fires once). Run it in the transaction that
 * enqueues their events.
 */
export async function expireDue(db: Queryable, limit: number): Promise<Changed[]> {
  const { rows } = await db.query<AvailabilityRow & { previous: AvailabilityStatus }>(
    `WITH due AS (SELECT id, availability FROM users
                  WHERE offline_due_at <= now() AND NOT socket_connected
                  ORDER BY offline_due_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     UPDATE users u SET availability = 'offline', offline_due_at = NULL,
       availability_updated_at = CASE WHEN due.availability = 'offline' THEN u.availability_updated_at ELSE now() END
     FROM due WHERE u.id = due.id
     RETURNING ${COLUMNS}, due.availability AS previous`,
    [limit],
  );
  return rows.map(({ previous, ...row }) => ({ row, previous }));
}

/** Milliseconds (by the database's clock) until the nearest offline timer fires; null: none waits. */
export async function nextDueInMs(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ ms: string | null }>(
    `SELECT (extract(epoch FROM min(offline_due_at) - now()) * 1000)::text AS ms FROM users WHERE offline_due_at IS NOT NULL`,
  );
  return rows[0].ms === null ? null : Number(rows[0].ms);
}
