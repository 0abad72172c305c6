import { iso, Queryable } from '@crm/db';

export interface NoteRow {
  id: string;
  conversation_id: string;
  /** Null for the AI assistant's notes (issue #32: its sources, why it handed a conversation over). */
  author_id: string | null;
  content: string;
  mentions: string[];
  created_at: Date;
}

const COLUMNS = 'id, conversation_id, author_id, content, mentions, created_at';

/** The internal Note shape: `{id, content, authorId, mentions, createdAt}`. */
export function toNote(r: NoteRow) {
  return { id: r.id, content: r.content, authorId: r.author_id ?? '', mentions: r.mentions, createdAt: iso(r.created_at) };
}

export async function insert(
  db: Queryable,
  n: { id: string; orgId: string; conversationId: string; authorId: string | null; content: string; mentions: string[] },
) {
  const { rows } = await db.query<NoteRow>(
    `INSERT INTO conversation_notes (id, org_id, conversation_id, author_id, content, mentions) VALUES ($1, $2, $3, $4, $5, $6::uuid[])
     RETURNING ${COLUMNS}`,
    [n.id, n.orgId, n.conversationId, n.authorId, n.content, n.mentions],
  );
  return rows[0];
}

/** One page of a conversation's notes, newest first. */
export async function page(db: Queryable, orgId: string, conversationId: string, limit: number, offset: number) {
  const [{ rows: countRows }, { rows }] = await Promise.all([
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM conversation_notes WHERE org_id = $1 AND conversation_id = $2', [orgId, conversationId]),
    db.query<NoteRow>(
      `SELECT ${COLUMNS} FROM conversation_notes WHERE org_id = $1 AND conversation_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`,
      [orgId, conversationId, limit, offset],
    ),
  ]);
  return { total: countRows[0].n, rows };
}

/** Notes written in [from, until) (either end open when null), newest first, at most `limit`. */
export async function inRange(db: Queryable, orgId: string, conversationId: string, from: Date | null, until: Date | null, limit: number) {
  const { rows } = await db.query<NoteRow>(
    `SELECT ${COLUMNS} FROM conversation_notes
     WHERE org_id = $1 AND conversation_id = $2 AND ($3::timestamptz IS NULL OR created_at >= $3) AND ($4::timestamptz IS NULL OR created_at < $4)
     ORDER BY created_at DESC, id DESC LIMIT $5`,
    [orgId, conversationId, from, until, limit],
  );
  return rows;
}

export async function find(db: Queryable, orgId: string, conversationId: string, id: string): Promise<NoteRow | undefined> {
  const { rows } = await db.query<NoteRow>(`SELECT ${COLUMNS} FROM conversation_notes WHERE org_id = $1 AND conversation_id = $2 AND id = $3`, [
    orgId,
    conversationId,
    id,
  ]);
  return rows[0];
}

export async function remove(db: Queryable, orgId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM conversation_notes WHERE org_id = $1 AND id = $2', [orgId, id]);
  return rowCount === 1;
}
