import type { Queryable } from '@crm/db';

/** Who reacted: an agent (their user id) or a member of the thread on the network (their uid). */
export type ReactorKind = 'agent' | 'contact';

/** Set one person's reaction on a message, replacing the one they had (one reaction per person and message). */
export async function upsertReaction(
  db: Queryable,
  r: { orgId: string; messageId: string; by: ReactorKind; userId: string; emoji: string; at: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO message_reactions (org_id, message_id, by_kind, user_id, emoji, created_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (message_id, by_kind, user_id) DO UPDATE SET emoji = EXCLUDED.emoji, created_at = EXCLUDED.created_at`,
    [r.orgId, r.messageId, r.by, r.userId, r.emoji, r.at],
  );
}

/** Take one person's reaction off a message; false when they had none. */
export async function deleteReaction(db: Queryable, orgId: string, messageId: string, by: ReactorKind, userId: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM message_reactions WHERE org_id = $1 AND message_id = $2 AND by_kind = $3 AND user_id = $4', [
    orgId,
    messageId,
    by,
    userId,
  ]);
  return (rowCount ?? 0) > 0;
}

/** The emoji one person has on a message, if any. */
export async function reactionOf(db: Queryable, orgId: string, messageId: string, by: ReactorKind, userId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ emoji: string }>(
    'SELECT emoji FROM message_reactions WHERE org_id = $1 AND message_id = $2 AND by_kind = $3 AND user_id = $4',
    [orgId, messageId, by, userId],
  );
  return rows[0]?.emoji;
}
