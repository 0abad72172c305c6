import type { Queryable } from '@crm/db';
import { messagingRules } from '@crm/validation';
import type { AgentVisibility } from '../visibility';

/** The org's inbox settings as stored (migrations 008 and 028); no row: every default. */
export interface InboxSettingsRow {
  agentVisibility: AgentVisibility;
  autoCloseAfterMinutes: number | null;
  autoCloseMessage: string | null;
  outOfHoursMessage: string | null;
  csatEnabled: boolean;
  /** The question as set; null: the default one. */
  csatMessage: string | null;
}

export const DEFAULTS: InboxSettingsRow = {
  agentVisibility: 'all',
  autoCloseAfterMinutes: null,
  autoCloseMessage: null,
  outOfHoursMessage: null,
  csatEnabled: false,
  csatMessage: null,
};

const COLUMNS = `agent_visibility AS "agentVisibility", auto_close_after_minutes AS "autoCloseAfterMinutes", auto_close_message AS "autoCloseMessage",
  out_of_hours_message AS "outOfHoursMessage", csat_enabled AS "csatEnabled", csat_message AS "csatMessage"`;

export async function find(db: Queryable, orgId: string, lock = false): Promise<InboxSettingsRow> {
  const { rows } = await db.query<InboxSettingsRow>(`SELECT ${COLUMNS} FROM inbox_settings WHERE org_id = $1${lock ? ' FOR UPDATE' : ''}`, [orgId]);
  return rows[0] ?? DEFAULTS;
}

/** Every setting written at once (the caller merged the change into what it read under the lock). */
export async function save(db: Queryable, orgId: string, s: InboxSettingsRow): Promise<void> {
  await db.query(
    `INSERT INTO inbox_settings (org_id, agent_visibility, auto_close_after_minutes, auto_close_message, out_of_hours_message, csat_enabled, csat_message)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (org_id) DO UPDATE SET agent_visibility = EXCLUDED.agent_visibility, auto_close_after_minutes = EXCLUDED.auto_close_after_minutes,
       auto_close_message = EXCLUDED.auto_close_message, out_of_hours_message = EXCLUDED.out_of_hours_message,
       csat_enabled = EXCLUDED.csat_enabled, csat_message = EXCLUDED.csat_message, updated_at = now()`,
    [orgId, s.agentVisibility, s.autoCloseAfterMinutes, s.autoCloseMessage, s.outOfHoursMessage, s.csatEnabled, s.csatMessage],
  );
}

/** The question CSAT sends: the org's, or the default. */
export const csatQuestion = (s: Pick<InboxSettingsRow, 'csatMessage'>) => s.csatMessage ?? messagingRules.DEFAULT_CSAT_MESSAGE;

/** The out-of-hours messages of those orgs that set one (one statement for an inbound batch; usually none). */
export async function outOfHoursMessages(db: Queryable, orgIds: string[]): Promise<Map<string, string>> {
  if (orgIds.length === 0) return new Map();
  const { rows } = await db.query<{ org_id: string; message: string }>(
    'SELECT org_id, out_of_hours_message AS message FROM inbox_settings WHERE org_id = ANY($1::uuid[]) AND out_of_hours_message IS NOT NULL',
    [orgIds],
  );
  return new Map(rows.map((r) => [r.org_id, r.message]));
}
