import type { Queryable } from '@crm/db';

/** Serialise alert emails of one (org, user, conversation) across consumers and instances, until the transaction ends. */
export async function lock(db: Queryable, orgId: string, userId: string, conversationId: string): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtext('automation.email_alerts'), hashtext($1 || $2 || $3))", [orgId, userId, conversationId]);
}

/** Whether an alert email about this conversation went to this user less than `windowMs` ago. */
export async function sentWithin(db: Queryable, orgId: string, userId: string, conversationId: string, windowMs: number): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM email_alerts_sent
     WHERE org_id = $1 AND user_id = $2 AND conversation_id = $3 AND sent_at > now() - make_interval(secs => $4::double precision / 1000)`,
    [orgId, userId, conversationId, windowMs],
  );
  return rows.length > 0;
}

export async function recordSent(db: Queryable, orgId: string, userId: string, conversationId: string): Promise<void> {
  await db.query(
    `INSERT INTO email_alerts_sent (org_id, user_id, conversation_id, sent_at) VALUES ($1, $2, $3, now())
     ON CONFLICT (org_id, user_id, conversation_id) DO UPDATE SET sent_at = EXCLUDED.sent_at`,
    [orgId, userId, conversationId],
  );
}

/** Throttle rows older than the window decide nothing any more; deleted in slices so a backlog never locks long. */
export async function pruneOlderThan(db: Queryable, windowMs: number, limit = 5_000): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM email_alerts_sent WHERE ctid IN (
       SELECT ctid FROM email_alerts_sent WHERE sent_at < now() - make_interval(secs => $1::double precision / 1000) LIMIT $2)`,
    [windowMs, limit],
  );
  return rowCount ?? 0;
}
