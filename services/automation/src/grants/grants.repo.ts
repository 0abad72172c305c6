import type { Queryable } from '@crm/db';

export interface StoredGrant {
  grant: string;
  /** Epoch seconds. */
  exp: number;
}

/** The org's grant; undefined when the gateway has not renewed one yet. */
export async function findGrant(db: Queryable, orgId: string): Promise<StoredGrant | undefined> {
  const res = await db.query<{ grant_token: string; exp: string }>(
    `SELECT grant_token, extract(epoch FROM expires_at)::bigint AS exp FROM org_grants WHERE org_id = $1`,
    [orgId],
  );
  const row = res.rows[0];
  return row ? { grant: row.grant_token, exp: Number(row.exp) } : undefined;
}

/**
 * Keep the grant that lives longest: a renewal that arrives late (or from a gateway with a slow clock) changes nothing.
 * False when the stored grant outlives `g`.
 */
export async function saveGrant(db: Queryable, orgId: string, g: StoredGrant): Promise<boolean> {
  const res = await db.query(
    `INSERT INTO org_grants (org_id, grant_token, expires_at) VALUES ($1, $2, to_timestamp($3))
     ON CONFLICT (org_id) DO UPDATE SET grant_token = EXCLUDED.grant_token, expires_at = EXCLUDED.expires_at, updated_at = now()
      WHERE org_grants.expires_at < EXCLUDED.expires_at`,
    [orgId, g.grant, g.exp],
  );
  return (res.rowCount ?? 0) > 0;
}
