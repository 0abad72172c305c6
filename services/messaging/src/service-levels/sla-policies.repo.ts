import type { Queryable } from '@crm/db';

export interface SlaPolicyFields {
  name: string;
  firstResponseMinutes: number;
  nextResponseMinutes: number | null;
  resolutionMinutes: number | null;
  businessHoursOnly: boolean;
  notify: string[];
  reassign: boolean;
}
export interface SlaPolicyRow extends SlaPolicyFields {
  id: string;
  chatnetAccountIds: string[];
  createdAt: Date;
  updatedAt: Date;
}

const COLUMNS = `p.id, p.name, p.first_response_minutes AS "firstResponseMinutes", p.next_response_minutes AS "nextResponseMinutes",
  p.resolution_minutes AS "resolutionMinutes", p.business_hours_only AS "businessHoursOnly", p.notify, p.reassign,
  p.created_at AS "createdAt", p.updated_at AS "updatedAt",
  ARRAY(SELECT a.chatnet_account_id::text FROM account_sla a WHERE a.policy_id = p.id ORDER BY a.chatnet_account_id) AS "chatnetAccountIds"`;

const values = (f: SlaPolicyFields) => [
  f.name,
  f.firstResponseMinutes,
  f.nextResponseMinutes,
  f.resolutionMinutes,
  f.businessHoursOnly,
  f.notify,
  f.reassign,
];

export async function page(db: Queryable, orgId: string, limit: number, offset: number): Promise<{ total: number; rows: SlaPolicyRow[] }> {
  const [{ rows: count }, { rows }] = await Promise.all([
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM sla_policies WHERE org_id = $1', [orgId]),
    db.query<SlaPolicyRow>(`SELECT ${COLUMNS} FROM sla_policies p WHERE p.org_id = $1 ORDER BY p.created_at, p.id LIMIT $2 OFFSET $3`, [
      orgId,
      limit,
      offset,
    ]),
  ]);
  return { total: count[0].n, rows };
}

export async function find(db: Queryable, orgId: string, id: string): Promise<SlaPolicyRow | undefined> {
  const { rows } = await db.query<SlaPolicyRow>(`SELECT ${COLUMNS} FROM sla_policies p WHERE p.org_id = $1 AND p.id = $2`, [orgId, id]);
  return rows[0];
}

export async function insert(db: Queryable, orgId: string, id: string, f: SlaPolicyFields): Promise<void> {
  await db.query(
    `INSERT INTO sla_policies (org_id, id, name, first_response_minutes, next_response_minutes, resolution_minutes, business_hours_only, notify, reassign)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [orgId, id, ...values(f)],
  );
}

/** False when the org has no such policy. */
export async function update(db: Queryable, orgId: string, id: string, f: SlaPolicyFields): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE sla_policies SET name = $3, first_response_minutes = $4, next_response_minutes = $5, resolution_minutes = $6,
            business_hours_only = $7, notify = $8, reassign = $9, updated_at = now()
      WHERE org_id = $1 AND id = $2`,
    [orgId, id, ...values(f)],
  );
  return (rowCount ?? 0) > 0;
}

/** The accounts it was attached to, or undefined when the org has no such policy. */
export async function remove(db: Queryable, orgId: string, id: string): Promise<string[] | undefined> {
  const { rows } = await db.query<{ accounts: string[] }>(
    `WITH gone AS (DELETE FROM sla_policies WHERE org_id = $1 AND id = $2 RETURNING id)
     SELECT ARRAY(SELECT a.chatnet_account_id::text FROM account_sla a JOIN gone ON a.policy_id = gone.id ORDER BY 1) AS accounts FROM gone`,
    [orgId, id],
  );
  return rows[0]?.accounts;
}

export async function accountPolicy(db: Queryable, orgId: string, accountId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ policy_id: string }>('SELECT policy_id FROM account_sla WHERE org_id = $1 AND chatnet_account_id = $2', [
    orgId,
    accountId,
  ]);
  return rows[0]?.policy_id;
}

/** Attach (policyId) or detach (null) an account; the policy must be the org's (checked by the caller in the same transaction). */
export async function setAccountPolicy(db: Queryable, orgId: string, accountId: string, policyId: string | null): Promise<void> {
  if (policyId === null) {
    await db.query('DELETE FROM account_sla WHERE org_id = $1 AND chatnet_account_id = $2', [orgId, accountId]);
    return;
  }
  await db.query(
    `INSERT INTO account_sla (org_id, chatnet_account_id, policy_id) VALUES ($1, $2, $3)
     ON CONFLICT (org_id, chatnet_account_id) DO UPDATE SET policy_id = EXCLUDED.policy_id, updated_at = now()`,
    [orgId, accountId, policyId],
  );
}
