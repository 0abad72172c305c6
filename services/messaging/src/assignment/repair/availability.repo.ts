import type { Queryable } from '@crm/db';
import type { AvailabilityStatus } from '@crm/events';

/**
 * Users' effective availability as identity last announced it (user.availability_changed). A user identity never
 * spoke of counts as online: identity announces a change only when one happens, so on a fresh install (or before
 * the first event of a user) "unknown = offline" would leave every onlyOnline account assigning nobody; identity
 * marks a user without a socket offline within minutes, so an unknown user is one who has not been away yet.
 */

/**
 * Record a status as of `at` (the event's occurredAt). An older announcement arriving after a newer one changes
 * nothing. Answers the status before (undefined: unknown) when the row changed, null when it did not.
 */
export async function record(
  db: Queryable,
  orgId: string,
  userId: string,
  status: AvailabilityStatus,
  at: Date,
): Promise<{ before: AvailabilityStatus | undefined } | null> {
  const { rows } = await db.query<{ before: AvailabilityStatus | null; applied: boolean }>(
    `WITH prior AS (SELECT status FROM user_availability WHERE org_id = $1 AND user_id = $2 FOR UPDATE),
     saved AS (
       INSERT INTO user_availability AS u (org_id, user_id, status, changed_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (org_id, user_id) DO UPDATE SET status = EXCLUDED.status, changed_at = EXCLUDED.changed_at
       WHERE u.changed_at < EXCLUDED.changed_at
       RETURNING 1)
     SELECT (SELECT status FROM prior) AS before, EXISTS (SELECT 1 FROM saved) AS applied`,
    [orgId, userId, status, at],
  );
  return rows[0].applied ? { before: rows[0].before ?? undefined } : null;
}

/** Which of `userIds` are not online as far as is known (away or offline); unknown users are online. */
export async function notOnline(db: Queryable, orgId: string, userIds: string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const { rows } = await db.query<{ user_id: string }>(
    `SELECT user_id::text FROM user_availability WHERE org_id = $1 AND user_id = ANY($2::uuid[]) AND status <> 'online'`,
    [orgId, userIds],
  );
  return new Set(rows.map((r) => r.user_id));
}

/** Whether one user counts as online (unknown: yes). */
export async function isOnline(db: Queryable, orgId: string, userId: string): Promise<boolean> {
  return !(await notOnline(db, orgId, [userId])).has(userId);
}
