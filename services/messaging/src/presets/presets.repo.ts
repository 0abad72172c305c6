import { iso, Queryable } from '@crm/db';

interface PresetRow {
  id: string;
  name: string;
  content: string;
  category: string;
  created_at: Date;
  updated_at: Date;
}

function toPreset(r: PresetRow) {
  return { id: r.id, name: r.name, content: r.content, category: r.category, createdAt: iso(r.created_at), updatedAt: iso(r.updated_at) };
}

const COLUMNS = 'id, name, content, category, created_at, updated_at';

export async function list(db: Queryable, orgId: string, category?: string) {
  const { rows } = await db.query<PresetRow>(
    `SELECT ${COLUMNS} FROM chat_presets WHERE org_id = $1 AND ($2::text IS NULL OR category = $2) ORDER BY category, lower(name), id`,
    [orgId, category ?? null],
  );
  return rows.map(toPreset);
}

export async function get(db: Queryable, orgId: string, id: string) {
  const { rows } = await db.query<PresetRow>(`SELECT ${COLUMNS} FROM chat_presets WHERE org_id = $1 AND id = $2`, [orgId, id]);
  return rows[0] ? toPreset(rows[0]) : undefined;
}

export async function insert(
  db: Queryable,
  p: { id: string; orgId: string; name: string; content: string; category: string; createdBy: string | null },
) {
  const { rows } = await db.query<PresetRow>(
    `INSERT INTO chat_presets (id, org_id, name, content, category, created_by) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    [p.id, p.orgId, p.name, p.content, p.category, p.createdBy],
  );
  return toPreset(rows[0]);
}

export async function update(db: Queryable, orgId: string, id: string, p: { name?: string; content?: string; category?: string }) {
  const { rows } = await db.query<PresetRow>(
    `UPDATE chat_presets SET name = COALESCE($3, name), content = COALESCE($4, content), category = COALESCE($5, category), updated_at = now()
     WHERE org_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [orgId, id, p.name ?? null, p.content ?? null, p.category ?? null],
  );
  return rows[0] ? toPreset(rows[0]) : undefined;
}

export async function remove(db: Queryable, orgId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM chat_presets WHERE org_id = $1 AND id = $2', [orgId, id]);
  return rowCount === 1;
}
