import type { Queryable } from '@crm/db';

export interface GuardSettingsRow {
  org_id: string;
  fallback_providers: string[];
  auto_reply_enabled: boolean;
  auto_reply_account_ids: string[];
  auto_reply_min_confidence: number;
  auto_reply_outside_hours_only: boolean;
  auto_reply_max_replies: number;
  updated_at: Date;
}

export async function find(db: Queryable, orgId: string): Promise<GuardSettingsRow | undefined> {
  const { rows } = await db.query<GuardSettingsRow>({
    name: 'guard_settings_one',
    text: 'SELECT * FROM guard_settings WHERE org_id = $1',
    values: [orgId],
  });
  return rows[0];
}

export async function save(
  db: Queryable,
  s: {
    orgId: string;
    fallbackProviders: string[];
    enabled: boolean;
    accountIds: string[];
    minConfidence: number;
    outsideHoursOnly: boolean;
    maxReplies: number;
    userId: string | null;
  },
): Promise<GuardSettingsRow> {
  const { rows } = await db.query<GuardSettingsRow>(
    `INSERT INTO guard_settings (org_id, fallback_providers, auto_reply_enabled, auto_reply_account_ids, auto_reply_min_confidence,
       auto_reply_outside_hours_only, auto_reply_max_replies, updated_by)
     VALUES ($1, $2::text[], $3, $4::uuid[], $5, $6, $7, $8)
     ON CONFLICT (org_id) DO UPDATE SET fallback_providers = EXCLUDED.fallback_providers, auto_reply_enabled = EXCLUDED.auto_reply_enabled,
       auto_reply_account_ids = EXCLUDED.auto_reply_account_ids, auto_reply_min_confidence = EXCLUDED.auto_reply_min_confidence,
       auto_reply_outside_hours_only = EXCLUDED.auto_reply_outside_hours_only, auto_reply_max_replies = EXCLUDED.auto_reply_max_replies,
       updated_by = EXCLUDED.updated_by, updated_at = now()
     RETURNING *`,
    [s.orgId, s.fallbackProviders, s.enabled, s.accountIds, s.minConfidence, s.outsideHoursOnly, s.maxReplies, s.userId],
  );
  return rows[0];
}
