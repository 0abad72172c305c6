import { iso, Queryable } from '@crm/db';

interface FolderRow {
  id: string;
  name: string;
  color: string;
  created_at: Date;
  conversation_count: number;
}

function toFolder(r: FolderRow) {
  return { id: r.id, name: r.name, color: r.color, conversationCount: r.conversation_count, createdAt: iso(r.created_at) };
}

const SELECT = `SELECT f.id, f.name, f.color, f.created_at,
  (SELECT count(*)::int FROM conversation_folders cf WHERE cf.folder_id = f.id) AS conversation_count
  FROM chat_folders f`;

export async function list(db: Queryable, orgId: string) {
  const { rows } = await db.query<FolderRow>(`${SELECT} WHERE f.org_id = $1 ORDER BY f.created_at, f.id`, [orgId]);
  return rows.map(toFolder);
}

export async function get(db: Queryable, orgId: string, id: string) {
  const { rows } = await db.query<FolderRow>(`${SELECT} WHERE f.org_id = $1 AND f.id = $2`, [orgId, id]);
  return rows[0] ? toFolder(rows[0]) : undefined;
}

export async function insert(db: Queryable, f: { id: string; orgId: string; name: string; color: string }) {
  await db.query('INSERT INTO chat_folders (id, org_id, name, color) VALUES ($1, $2, $3, $4)', [f.id, f.orgId, f.name, f.color]);
}

export async function update(db: Queryable, orgId: string, id: string, p: { name?: string; color?: string }): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE chat_folders SET name = COALESCE($3, name), color = COALESCE($4, color) WHERE org_id = $1 AND id = $2',
    [orgId, id, p.name ?? null, p.color ?? null],
  );
  return rowCount === 1;
}

export async function remove(db: Queryable, orgId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM chat_folders WHERE org_id = $1 AND id = $2', [orgId, id]);
  return rowCount === 1;
}

export async function addConversations(db: Queryable, orgId: string, folderId: string, conversationIds: string[]) {
  await db.query(`INSERT INTO conversation_folders (folder_id, conversation_id, org_id) SELECT $2, unnest($3::uuid[]), $1 ON CONFLICT DO NOTHING`, [
    orgId,
    folderId,
    conversationIds,
  ]);
}

export async function removeConversation(db: Queryable, orgId: string, folderId: string, conversationId: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM conversation_folders WHERE org_id = $1 AND folder_id = $2 AND conversation_id = $3', [
    orgId,
    folderId,
    conversationId,
  ]);
  return rowCount === 1;
}
