import type { Queryable } from '@crm/db';

/** Channel of migration 033's trigger: every write of an org's copy names the org here, at commit. */
export const AUTO_REPLY_SETTINGS_CHANNEL = 'messaging_ai_auto_reply_changed';

export interface AutoReplySettingsRow {
  org_id: string;
  enabled: boolean;
  account_ids: string[];
  only_outside_hours: boolean;
  max_replies: number;
  updated_at: Date;
}

/** ai's settings as announced; an older announcement arriving late changes nothing. */
export async function upsert(
  db: Queryable,
  s: { orgId: string; enabled: boolean; accountIds: string[]; onlyOutsideHours: boolean; maxReplies: number; updatedAt: string },
): Promise<void> {
  await db.query(
    `INSERT INTO ai_auto_reply_settings (org_id, enabled, account_ids, only_outside_hours, max_replies, updated_at)
     VALUES ($1, $2, $3::uuid[], $4, $5, $6)
     ON CONFLICT (org_id) DO UPDATE SET enabled = EXCLUDED.enabled, account_ids = EXCLUDED.account_ids,
       only_outside_hours = EXCLUDED.only_outside_hours, max_replies = EXCLUDED.max_replies, updated_at = EXCLUDED.updated_at
     WHERE ai_auto_reply_settings.updated_at < EXCLUDED.updated_at`,
    [s.orgId, s.enabled, s.accountIds, s.onlyOutsideHours, s.maxReplies, s.updatedAt],
  );
}

export async function find(db: Queryable, orgId: string): Promise<AutoReplySettingsRow | undefined> {
  const { rows } = await db.query<AutoReplySettingsRow>('SELECT * FROM ai_auto_reply_settings WHERE org_id = $1', [orgId]);
  return rows[0];
}

/** Every enabled org's accounts: the in-memory set (a few rows per org that turned auto-reply on). */
export async function enabledAccounts(db: Queryable): Promise<Array<{ org_id: string; account_ids: string[] }>> {
  const { rows } = await db.query<{ org_id: string; account_ids: string[] }>(
    `SELECT org_id, account_ids FROM ai_auto_reply_settings WHERE enabled AND cardinality(account_ids) > 0`,
  );
  return rows;
}
