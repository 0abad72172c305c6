import { iso, Queryable } from '@crm/db';

export interface TemplateRow {
  id: string;
  org_id: string;
  name: string;
  content: string;
  category: string;
  variables: string[];
  created_at: Date;
  updated_at: Date;
}

export function toTemplate(r: TemplateRow) {
  return {
    id: r.id,
    name: r.name,
    content: r.content,
    category: r.category,
    variables: r.variables,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

export async function listTemplates(db: Queryable, orgId: string, category?: string) {
  const { rows } = category
    ? await db.query<TemplateRow>('SELECT * FROM templates WHERE org_id = $1 AND category = $2 ORDER BY created_at DESC, id DESC', [orgId, category])
    : await db.query<TemplateRow>('SELECT * FROM templates WHERE org_id = $1 ORDER BY created_at DESC, id DESC', [orgId]);
  return rows.map(toTemplate);
}

const GET = { name: 'automation_get_template', text: 'SELECT * FROM templates WHERE org_id = $1 AND id = $2' };

export async function getTemplate(db: Queryable, orgId: string, id: string): Promise<TemplateRow | undefined> {
  const { rows } = await db.query<TemplateRow>({ ...GET, values: [orgId, id] });
  return rows[0];
}

/** Which of these ids are templates of the org. */
export async function existingTemplateIds(db: Queryable, orgId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>('SELECT id FROM templates WHERE org_id = $1 AND id = ANY($2::uuid[])', [orgId, ids]);
  return new Set(rows.map((r) => r.id));
}

export async function insertTemplate(
  db: Queryable,
  t: { id: string; orgId: string; name: string; content: string; category: string; variables: string[] },
): Promise<TemplateRow> {
  const { rows } = await db.query<TemplateRow>(
    'INSERT INTO templates (id, org_id, name, content, category, variables) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *',
    [t.id, t.orgId, t.name, t.content, t.category, t.variables],
  );
  return rows[0];
}

export async function updateTemplate(
  db: Queryable,
  orgId: string,
  id: string,
  p: { name?: string; content?: string; category?: string; variables?: string[] },
): Promise<TemplateRow | undefined> {
  const { rows } = await db.query<TemplateRow>(
    `UPDATE templates SET name = COALESCE($3, name), content = COALESCE($4, content), category = COALESCE($5, category),
       variables = COALESCE($6::text[], variables), updated_at = now()
     WHERE org_id = $1 AND id = $2 RETURNING *`,
    [orgId, id, p.name ?? null, p.content ?? null, p.category ?? null, p.variables ?? null],
  );
  return rows[0];
}

export async function deleteTemplate(db: Queryable, orgId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM templates WHERE org_id = $1 AND id = $2', [orgId, id]);
  return rowCount === 1;
}
