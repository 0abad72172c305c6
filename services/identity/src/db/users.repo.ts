import { coalescedReads, escapeLike, iso, isoOrUndefined, isPool, isUuid, offsetOf, pagination, Queryable } from '@crm/db';

export interface UserRow {
  id: string;
  org_id: string;
  email: string;
  password_hash: string | null;
  full_name: string;
  role: string;
  department: string;
  phone: string;
  avatar: string;
  status: string;
  created_at: Date;
  last_login: Date | null;
  notify_by_email: boolean;
  /** Effective availability (migration 005; availability/ writes it). */
  availability: string;
}

/** The User message as the API shows it; never includes the password hash. */
export function toUser(r: UserRow) {
  return {
    id: r.id,
    email: r.email,
    fullName: r.full_name,
    role: r.role,
    orgId: r.org_id,
    department: r.department,
    phone: r.phone,
    avatar: r.avatar,
    status: r.status,
    createdAt: iso(r.created_at),
    lastLogin: isoOrUndefined(r.last_login),
    availability: r.availability,
  };
}

export async function insertUser(
  db: Queryable,
  u: { id: string; orgId: string; email: string; passwordHash: string | null; fullName: string; role: string; department?: string; phone?: string },
): Promise<UserRow> {
  const { rows } = await db.query<UserRow>(
    `INSERT INTO users (id, org_id, email, password_hash, full_name, role, department, phone)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [u.id, u.orgId, u.email, u.passwordHash, u.fullName, u.role, u.department ?? '', u.phone ?? ''],
  );
  return rows[0];
}

export async function findByEmail(db: Queryable, email: string): Promise<UserRow | undefined> {
  const { rows } = await db.query<UserRow>({ name: 'user_by_email', text: 'SELECT * FROM users WHERE email = $1', values: [email] });
  return rows[0];
}

/** Org-scoped lookup: another org's id is simply not found. */
export async function findInOrg(db: Queryable, orgId: string, id: string): Promise<UserRow | undefined> {
  // On the pool, the lookups of one turn (a batch of GetProfile or GetUser calls) share one query; a malformed id
  // keeps the single read, so its error (22P02, a 400) stays its own.
  if (isPool(db) && isUuid(orgId) && isUuid(id)) return usersInOrg(db, { orgId, id });
  return findOneInOrg(db, orgId, id);
}

async function findOneInOrg(db: Queryable, orgId: string, id: string): Promise<UserRow | undefined> {
  const { rows } = await db.query<UserRow>({
    name: 'user_in_org',
    text: 'SELECT * FROM users WHERE id = $1 AND org_id = $2',
    values: [id, orgId],
  });
  return rows[0];
}

const inOrgKey = (orgId: string, id: string) => `${orgId.toLowerCase()}/${id.toLowerCase()}`;
const usersInOrg = coalescedReads<{ orgId: string; id: string }, UserRow>({
  keyOf: (k) => inOrgKey(k.orgId, k.id),
  one: (db, k) => findOneInOrg(db, k.orgId, k.id),
  many: async (db, keys) => {
    const { rows } = await db.query<UserRow>({
      name: 'users_in_org',
      text: 'SELECT u.* FROM unnest($1::uuid[], $2::uuid[]) AS k(id, org_id) JOIN users u ON u.id = k.id AND u.org_id = k.org_id',
      values: [keys.map((k) => k.id), keys.map((k) => k.orgId)],
    });
    return rows.map((r): [string, UserRow] => [inOrgKey(r.org_id, r.id), r]);
  },
});

/** Set the user's email-alert preference; undefined when the user is not an active user of the org. */
export async function setNotifyByEmail(db: Queryable, orgId: string, id: string, on: boolean): Promise<boolean | undefined> {
  const { rows } = await db.query<{ notify_by_email: boolean }>(
    `UPDATE users SET notify_by_email = $3 WHERE id = $1 AND org_id = $2 AND status = 'active' RETURNING notify_by_email`,
    [id, orgId, on],
  );
  return rows[0]?.notify_by_email;
}

export async function findById(db: Queryable, id: string): Promise<UserRow | undefined> {
  const { rows } = await db.query<UserRow>('SELECT * FROM users WHERE id = $1', [id]);
  return rows[0];
}

export interface UserFilter {
  page: number;
  limit: number;
  role?: string;
  department?: string;
  status?: string;
  search?: string;
  availability?: string;
}

export async function listUsers(db: Queryable, orgId: string, f: UserFilter) {
  const where = ['org_id = $1'];
  const args: unknown[] = [orgId];
  const add = (sql: string, v: unknown) => {
    args.push(v);
    where.push(sql.replace('?', `$${args.length}`));
  };
  if (f.role) add('role = ?', f.role);
  if (f.department) add('department = ?', f.department);
  if (f.status) add('status = ?', f.status);
  if (f.availability) add('availability = ?', f.availability);
  if (f.search) add(`(full_name ILIKE ? OR email::text ILIKE $${args.length + 1})`, `%${escapeLike(f.search)}%`);
  const whereSql = where.join(' AND ');
  const total = (await db.query<{ n: number }>(`SELECT count(*) AS n FROM users WHERE ${whereSql}`, args)).rows[0].n;
  const { rows } = await db.query<UserRow>(
    `SELECT * FROM users WHERE ${whereSql} ORDER BY created_at, id LIMIT ${f.limit} OFFSET ${offsetOf(f)}`,
    args,
  );
  return { data: rows.map(toUser), pagination: pagination(f, total) };
}

export async function updateUser(
  db: Queryable,
  orgId: string,
  id: string,
  patch: { fullName?: string; role?: string; department?: string; phone?: string; avatar?: string; status?: string; passwordHash?: string },
): Promise<UserRow | undefined> {
  const cols: Record<string, unknown> = {
    full_name: patch.fullName,
    role: patch.role,
    department: patch.department,
    phone: patch.phone,
    avatar: patch.avatar,
    status: patch.status,
    password_hash: patch.passwordHash,
  };
  const sets: string[] = [];
  const args: unknown[] = [id, orgId];
  for (const [col, v] of Object.entries(cols)) {
    if (v === undefined) continue;
    args.push(v);
    sets.push(`${col} = $${args.length}`);
  }
  sets.push('updated_at = now()');
  const { rows } = await db.query<UserRow>(`UPDATE users SET ${sets.join(', ')} WHERE id = $1 AND org_id = $2 RETURNING *`, args);
  return rows[0];
}

export async function touchLastLogin(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE users SET last_login = now() WHERE id = $1', [id]);
}

export async function countActiveOwners(db: Queryable, orgId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*) AS n FROM users WHERE org_id = $1 AND role = 'owner' AND status = 'active'", [
    orgId,
  ]);
  return rows[0].n;
}

/** Which of these ids are users of the org (for team members and assignments). */
export async function existingUserIds(db: Queryable, orgId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>('SELECT id FROM users WHERE org_id = $1 AND id = ANY($2::uuid[])', [orgId, ids]);
  return new Set(rows.map((r) => r.id));
}
