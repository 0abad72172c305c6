import { iso, offsetOf, pagination, PageRequest, Queryable } from '@crm/db';
import type { messagingRules } from '@crm/validation';

export type MacroAction = messagingRules.MacroAction;

export interface MacroRow {
  id: string;
  org_id: string;
  name: string;
  shared: boolean;
  owner_id: string | null;
  actions: MacroAction[];
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'm.id, m.org_id, m.name, m.shared, m.owner_id, m.actions, m.created_at, m.updated_at';

/**
 * What a caller may see: the org's shared macros and their own personal ones. `userId` null (an API key, a service)
 * owns nothing, so sees only the shared ones.
 */
const VISIBLE = '(m.shared OR m.owner_id = $2)';

/** A nullable action field travels over gRPC as "" for null (proto3 strings have no null). */
const wire = (v: string | null) => (v === null ? '' : v);

/** The internal API's Macro (messaging.v1.Macro). */
export function toMacro(r: MacroRow) {
  return {
    id: r.id,
    name: r.name,
    shared: r.shared,
    ownerId: r.owner_id ?? undefined,
    actions: r.actions.map((a) => {
      switch (a.type) {
        case 'assign':
          return { type: a.type, assigneeId: wire(a.assigneeId), teamId: a.teamId === undefined ? undefined : wire(a.teamId) };
        case 'set_priority':
          return { type: a.type, priority: wire(a.priority) };
        default:
          return a;
      }
    }),
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

export async function insert(
  db: Queryable,
  m: { id: string; orgId: string; name: string; shared: boolean; ownerId: string | null; actions: MacroAction[] },
) {
  const { rows } = await db.query<MacroRow>(
    `INSERT INTO macros AS m (id, org_id, name, shared, owner_id, actions) VALUES ($1, $2, $3, $4, $5, $6::jsonb) RETURNING ${COLUMNS}`,
    [m.id, m.orgId, m.name, m.shared, m.ownerId, JSON.stringify(m.actions)],
  );
  return rows[0];
}

/** One macro the caller may see (shared, or theirs); another's personal macro is as unknown as another org's. */
export async function findVisible(db: Queryable, orgId: string, userId: string | null, id: string, lock = false): Promise<MacroRow | undefined> {
  const { rows } = await db.query<MacroRow>(
    `SELECT ${COLUMNS} FROM macros m WHERE m.org_id = $1 AND ${VISIBLE} AND m.id = $3${lock ? ' FOR UPDATE' : ''}`,
    [orgId, userId, id],
  );
  return rows[0];
}

/** A page of the macros the caller may see, by name; `shared` narrows to the shared or to their own. */
export async function page(db: Queryable, orgId: string, userId: string | null, f: PageRequest & { shared?: boolean }) {
  const where = [`m.org_id = $1`, VISIBLE];
  const values: unknown[] = [orgId, userId];
  if (f.shared !== undefined) {
    values.push(f.shared);
    where.push(`m.shared = $${values.length}`);
  }
  const cond = where.join(' AND ');
  const [{ rows: count }, { rows }] = await Promise.all([
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM macros m WHERE ${cond}`, values),
    db.query<MacroRow>(`SELECT ${COLUMNS} FROM macros m WHERE ${cond} ORDER BY lower(m.name), m.id LIMIT ${f.limit} OFFSET ${offsetOf(f)}`, values),
  ]);
  return { data: rows, pagination: pagination(f, count[0].n) };
}

export async function update(
  db: Queryable,
  orgId: string,
  id: string,
  m: { name: string; shared: boolean; ownerId: string | null; actions: MacroAction[] },
) {
  const { rows } = await db.query<MacroRow>(
    `UPDATE macros m SET name = $3, shared = $4, owner_id = $5, actions = $6::jsonb, updated_at = now() WHERE m.org_id = $1 AND m.id = $2 RETURNING ${COLUMNS}`,
    [orgId, id, m.name, m.shared, m.ownerId, JSON.stringify(m.actions)],
  );
  return rows[0];
}

export async function remove(db: Queryable, orgId: string, id: string): Promise<void> {
  await db.query('DELETE FROM macros WHERE org_id = $1 AND id = $2', [orgId, id]);
}
