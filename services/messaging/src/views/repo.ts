import { iso, offsetOf, pagination, PageRequest, Queryable } from '@crm/db';

export type ViewResource = 'conversations' | 'contacts';

export interface ViewRow {
  id: string;
  org_id: string;
  name: string;
  resource: ViewResource;
  shared: boolean;
  owner_id: string | null;
  filters: Record<string, string>;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'v.id, v.org_id, v.name, v.resource, v.shared, v.owner_id, v.filters, v.created_at, v.updated_at';

/** What a caller may see: the org's shared views and their own. `userId` null (an API key) owns none. */
const VISIBLE = '(v.shared OR v.owner_id = $2)';

/** The internal API's View (messaging.v1.View). */
export function toView(r: ViewRow) {
  return {
    id: r.id,
    name: r.name,
    resource: r.resource,
    shared: r.shared,
    ownerId: r.owner_id ?? undefined,
    filters: r.filters,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

export async function insert(
  db: Queryable,
  v: { id: string; orgId: string; name: string; resource: ViewResource; shared: boolean; ownerId: string | null; filters: Record<string, string> },
) {
  const { rows } = await db.query<ViewRow>(
    `INSERT INTO views AS v (id, org_id, name, resource, shared, owner_id, filters) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb) RETURNING ${COLUMNS}`,
    [v.id, v.orgId, v.name, v.resource, v.shared, v.ownerId, JSON.stringify(v.filters)],
  );
  return rows[0];
}

/** One view the caller may see (shared, or theirs); another's personal view is as unknown as another org's. */
export async function findVisible(db: Queryable, orgId: string, userId: string | null, id: string, lock = false): Promise<ViewRow | undefined> {
  const { rows } = await db.query<ViewRow>(
    `SELECT ${COLUMNS} FROM views v WHERE v.org_id = $1 AND ${VISIBLE} AND v.id = $3${lock ? ' FOR UPDATE' : ''}`,
    [orgId, userId, id],
  );
  return rows[0];
}

/** A page of the views the caller may see, by name; `resource` narrows to one list's. */
export async function page(db: Queryable, orgId: string, userId: string | null, f: PageRequest & { resource?: ViewResource }) {
  const where = ['v.org_id = $1', VISIBLE];
  const values: unknown[] = [orgId, userId];
  if (f.resource) {
    values.push(f.resource);
    where.push(`v.resource = $${values.length}`);
  }
  const cond = where.join(' AND ');
  const [{ rows: count }, { rows }] = await Promise.all([
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM views v WHERE ${cond}`, values),
    db.query<ViewRow>(`SELECT ${COLUMNS} FROM views v WHERE ${cond} ORDER BY lower(v.name), v.id LIMIT ${f.limit} OFFSET ${offsetOf(f)}`, values),
  ]);
  return { data: rows, pagination: pagination(f, count[0].n) };
}

export async function update(
  db: Queryable,
  orgId: string,
  id: string,
  v: { name: string; shared: boolean; ownerId: string | null; filters: Record<string, string> },
) {
  const { rows } = await db.query<ViewRow>(
    `UPDATE views v SET name = $3, shared = $4, owner_id = $5, filters = $6::jsonb, updated_at = now() WHERE v.org_id = $1 AND v.id = $2 RETURNING ${COLUMNS}`,
    [orgId, id, v.name, v.shared, v.ownerId, JSON.stringify(v.filters)],
  );
  return rows[0];
}

export async function remove(db: Queryable, orgId: string, id: string): Promise<void> {
  await db.query('DELETE FROM views WHERE org_id = $1 AND id = $2', [orgId, id]);
}
