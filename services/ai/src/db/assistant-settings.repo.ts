import type { Queryable } from '@crm/db';

export interface AssistantSettingsRow {
  org_id: string;
  provider: string;
  model: string;
  daily_quota: number;
  enabled: boolean;
  updated_at: Date;
}

export async function find(db: Queryable, orgId: string): Promise<AssistantSettingsRow | undefined> {
  const { rows } = await db.query<AssistantSettingsRow>({
    name: 'assistant_settings_one',
    text: 'SELECT * FROM assistant_settings WHERE org_id = $1',
    values: [orgId],
  });
  return rows[0];
}

export async function save(
  db: Queryable,
  s: { orgId: string; provider: string; model: string; dailyQuota: number; enabled: boolean; userId: string | null },
): Promise<AssistantSettingsRow> {
  const { rows } = await db.query<AssistantSettingsRow>(
    `INSERT INTO assistant_settings (org_id, provider, model, daily_quota, enabled, updated_by)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (org_id) DO UPDATE SET provider = EXCLUDED.provider, model = EXCLUDED.model,
       daily_quota = EXCLUDED.daily_quota, enabled = EXCLUDED.enabled, updated_by = EXCLUDED.updated_by, updated_at = now()
     RETURNING *`,
    [s.orgId, s.provider, s.model, s.dailyQuota, s.enabled, s.userId],
  );
  return rows[0];
}
