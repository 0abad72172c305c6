import type { Queryable } from '@crm/db';
import type { BusinessHours } from './schedule';

export interface BusinessHoursRow extends BusinessHours {
  updatedAt: Date;
}

const scope = (accountId: string | null) => (accountId === null ? 'chatnet_account_id IS NULL' : 'chatnet_account_id = $2');
const params = (orgId: string, accountId: string | null) => (accountId === null ? [orgId] : [orgId, accountId]);

/** The org's hours (accountId null) or an account's own; undefined when none were set. */
export async function find(db: Queryable, orgId: string, accountId: string | null): Promise<BusinessHoursRow | undefined> {
  const { rows } = await db.query(
    `SELECT timezone, days, holidays, updated_at AS "updatedAt" FROM business_hours WHERE org_id = $1 AND ${scope(accountId)}`,
    params(orgId, accountId),
  );
  return rows[0];
}

/** What applies to an account: its own hours, else the org's (one statement, own first). */
export async function effective(db: Queryable, orgId: string, accountId: string | null): Promise<(BusinessHoursRow & { own: boolean }) | undefined> {
  const { rows } = await db.query(
    `SELECT timezone, days, holidays, updated_at AS "updatedAt", chatnet_account_id IS NOT NULL AS own
       FROM business_hours
      WHERE org_id = $1 AND (chatnet_account_id IS NULL OR chatnet_account_id = $2)
      ORDER BY chatnet_account_id IS NULL LIMIT 1`,
    [orgId, accountId],
  );
  return rows[0];
}

/** Every row of the org: its own hours (accountId null) and each account's. An org has a handful of accounts. */
export async function listAll(db: Queryable, orgId: string): Promise<Array<BusinessHoursRow & { accountId: string | null }>> {
  const { rows } = await db.query(
    `SELECT chatnet_account_id AS "accountId", timezone, days, holidays, updated_at AS "updatedAt"
       FROM business_hours WHERE org_id = $1 ORDER BY chatnet_account_id NULLS FIRST`,
    [orgId],
  );
  return rows;
}

export async function upsert(db: Queryable, orgId: string, accountId: string | null, hours: BusinessHours): Promise<BusinessHoursRow> {
  const target =
    accountId === null ? '(org_id) WHERE chatnet_account_id IS NULL' : '(org_id, chatnet_account_id) WHERE chatnet_account_id IS NOT NULL';
  const { rows } = await db.query(
    `INSERT INTO business_hours (org_id, chatnet_account_id, timezone, days, holidays) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT ${target} DO UPDATE SET timezone = EXCLUDED.timezone, days = EXCLUDED.days, holidays = EXCLUDED.holidays, updated_at = now()
     RETURNING timezone, days, holidays, updated_at AS "updatedAt"`,
    [orgId, accountId, hours.timezone, JSON.stringify(hours.days), JSON.stringify(hours.holidays)],
  );
  return rows[0];
}

/** An account follows the org's hours again; true when it had its own. */
export async function removeOwn(db: Queryable, orgId: string, accountId: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM business_hours WHERE org_id = $1 AND chatnet_account_id = $2', [orgId, accountId]);
  return (rowCount ?? 0) > 0;
}
