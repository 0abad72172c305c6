import type { Queryable } from '@crm/db';

export interface ProviderSettingsRow {
  org_id: string;
  provider: string;
  api_key_enc: string | null;
  key_last4: string | null;
  base_url: string | null;
  updated_at: Date;
}

export async function listForOrg(db: Queryable, orgId: string): Promise<ProviderSettingsRow[]> {
  const { rows } = await db.query<ProviderSettingsRow>({
    name: 'provider_settings_by_org',
    text: 'SELECT * FROM provider_settings WHERE org_id = $1',
    values: [orgId],
  });
  return rows;
}

export async function findOne(db: Queryable, orgId: string, provider: string): Promise<ProviderSettingsRow | undefined> {
  const { rows } = await db.query<ProviderSettingsRow>({
    name: 'provider_settings_one',
    text: 'SELECT * FROM provider_settings WHERE org_id = $1 AND provider = $2',
    values: [orgId, provider],
  });
  return rows[0];
}

/**
 * Change what was sent: `key` undefined leaves the key alone, null removes it; the same for `baseUrl`.
 * A row left with neither key nor base URL is deleted.
 */
export async function upsert(
  db: Queryable,
  p: { orgId: string; provider: string; userId: string | null; key?: { enc: string; last4: string } | null; baseUrl?: string | null },
): Promise<void> {
  const setKey = p.key !== undefined;
  const setUrl = p.baseUrl !== undefined;
  await db.query(
    `INSERT INTO provider_settings (org_id, provider, api_key_enc, key_last4, base_url, updated_by)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (org_id, provider) DO UPDATE SET
       api_key_enc = CASE WHEN $7 THEN EXCLUDED.api_key_enc ELSE provider_settings.api_key_enc END,
       key_last4 = CASE WHEN $7 THEN EXCLUDED.key_last4 ELSE provider_settings.key_last4 END,
       base_url = CASE WHEN $8 THEN EXCLUDED.base_url ELSE provider_settings.base_url END,
       updated_by = EXCLUDED.updated_by,
       updated_at = now()`,
    [p.orgId, p.provider, p.key?.enc ?? null, p.key?.last4 ?? null, p.baseUrl ?? null, p.userId, setKey, setUrl],
  );
  await db.query('DELETE FROM provider_settings WHERE org_id = $1 AND provider = $2 AND api_key_enc IS NULL AND base_url IS NULL', [
    p.orgId,
    p.provider,
  ]);
}
