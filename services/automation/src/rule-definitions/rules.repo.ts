import { iso, isoOrUndefined, offsetOf, PageRequest, pagination, Queryable } from '@crm/db';
import type { ActionDef } from './definition';
import type { Condition, IdleSettings, ScheduleSettings, TriggerDef, TriggerType } from './triggers';

export type RuleStatus = 'draft' | 'active' | 'paused';

export interface RuleRow {
  id: string;
  org_id: string;
  name: string;
  description: string;
  type: string;
  trigger_type: TriggerType;
  conditions: Condition[];
  keywords: string[];
  /** A timed trigger's own settings (schedule: cron, timezone, listId; conversation_idle: minutes, status). */
  trigger_config: { schedule?: ScheduleSettings; idle?: IdleSettings };
  actions: ActionDef[];
  status: RuleStatus;
  created_at: Date;
  updated_at: Date;
  run_count?: number;
  last_run_at?: Date | null;
}

export function triggerOf(r: RuleRow): TriggerDef {
  return { type: r.trigger_type, conditions: r.conditions, keywords: r.keywords, ...(r.trigger_config ?? {}) };
}

/** What the trigger_config column holds for a trigger. */
function configOf(t: TriggerDef): string {
  return JSON.stringify({ ...(t.schedule ? { schedule: t.schedule } : {}), ...(t.idle ? { idle: t.idle } : {}) });
}

const conditionMessage = (c: Condition) => ({ field: c.field, operator: c.operator, valueJson: JSON.stringify(c.value) });

/** One Action message: a cleared priority (null) travels as "" (proto3 strings have no null); if steps nest. */
function actionMessage(a: ActionDef): Record<string, unknown> {
  if (a.type === 'set_priority') return { ...a, priority: a.priority ?? '' };
  if (a.type === 'if')
    return { type: a.type, conditions: a.conditions.map(conditionMessage), then: a.then.map(actionMessage), else: a.else.map(actionMessage) };
  return a;
}

/** The Rule message: condition values travel as JSON text, unset action fields stay absent. */
export function toRule(r: RuleRow) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    type: r.type,
    trigger: {
      type: r.trigger_type,
      conditions: r.conditions.map(conditionMessage),
      keywords: r.keywords,
      ...(r.trigger_config?.schedule ?? {}),
      ...(r.trigger_config?.idle ?? {}),
    },
    actions: r.actions.map(actionMessage),
    status: r.status,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    runCount: r.run_count ?? 0,
    lastRunAt: isoOrUndefined(r.last_run_at),
  };
}

const SELECT = `SELECT r.*,
  (SELECT count(*) FROM rule_runs x WHERE x.rule_id = r.id) AS run_count,
  (SELECT max(created_at) FROM rule_runs x WHERE x.rule_id = r.id) AS last_run_at
  FROM rules r`;

export interface RuleFilter extends PageRequest {
  status?: string;
  type?: string;
  triggerType?: string;
}

export async function listRules(db: Queryable, orgId: string, f: RuleFilter) {
  const where = ['r.org_id = $1'];
  const args: unknown[] = [orgId];
  if (f.status) where.push(`r.status = $${args.push(f.status)}`);
  if (f.type) where.push(`r.type = $${args.push(f.type)}`);
  if (f.triggerType) where.push(`r.trigger_type = $${args.push(f.triggerType)}`);
  const cond = where.join(' AND ');
  const [{ rows }, count] = await Promise.all([
    db.query<RuleRow>(`${SELECT} WHERE ${cond} ORDER BY r.created_at DESC, r.id DESC LIMIT ${f.limit} OFFSET ${offsetOf(f)}`, args),
    db.query<{ n: number }>(`SELECT count(*) AS n FROM rules r WHERE ${cond}`, args),
  ]);
  return { data: rows.map(toRule), pagination: pagination(f, count.rows[0].n) };
}

export async function getRule(db: Queryable, orgId: string, id: string): Promise<RuleRow | undefined> {
  const { rows } = await db.query<RuleRow>(`${SELECT} WHERE r.org_id = $1 AND r.id = $2`, [orgId, id]);
  return rows[0];
}

/** The rule's row without its run counts, locked for the rest of the transaction (its timers are being brought in line). */
export async function getRuleForUpdate(db: Queryable, orgId: string, id: string): Promise<RuleRow | undefined> {
  const { rows } = await db.query<RuleRow>('SELECT * FROM rules WHERE org_id = $1 AND id = $2 FOR UPDATE', [orgId, id]);
  return rows[0];
}

export interface NewRule {
  id: string;
  orgId: string;
  name: string;
  description: string;
  type: string;
  trigger: TriggerDef;
  actions: ActionDef[];
  createdBy: string | null;
  /** The signing secret, encrypted with the org and rule id as additional data. */
  secretEnc: string;
}

export async function insertRule(db: Queryable, r: NewRule): Promise<void> {
  await db.query(
    `INSERT INTO rules (id, org_id, name, description, type, trigger_type, conditions, keywords, actions, created_by, secret_enc, trigger_config)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      r.id,
      r.orgId,
      r.name,
      r.description,
      r.type,
      r.trigger.type,
      JSON.stringify(r.trigger.conditions),
      r.trigger.keywords,
      JSON.stringify(r.actions),
      r.createdBy,
      r.secretEnc,
      configOf(r.trigger),
    ],
  );
}

export interface RulePatch {
  name?: string;
  description?: string;
  type?: string;
  trigger?: TriggerDef;
  actions?: ActionDef[];
}

export async function updateRule(db: Queryable, orgId: string, id: string, p: RulePatch): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE rules SET
       name = COALESCE($3, name),
       description = COALESCE($4, description),
       type = COALESCE($5, type),
       trigger_type = COALESCE($6, trigger_type),
       conditions = COALESCE($7::jsonb, conditions),
       keywords = COALESCE($8::text[], keywords),
       actions = COALESCE($9::jsonb, actions),
       trigger_config = COALESCE($10::jsonb, trigger_config),
       updated_at = now()
     WHERE org_id = $1 AND id = $2`,
    [
      orgId,
      id,
      p.name ?? null,
      p.description ?? null,
      p.type ?? null,
      p.trigger?.type ?? null,
      p.trigger ? JSON.stringify(p.trigger.conditions) : null,
      p.trigger ? p.trigger.keywords : null,
      p.actions ? JSON.stringify(p.actions) : null,
      p.trigger ? configOf(p.trigger) : null,
    ],
  );
  return rowCount === 1;
}

export async function setStatus(db: Queryable, orgId: string, id: string, status: RuleStatus): Promise<void> {
  await db.query('UPDATE rules SET status = $3, updated_at = now() WHERE org_id = $1 AND id = $2', [orgId, id, status]);
}

/** The deleted rule's name, or undefined when the org has no such rule. */
export async function deleteRule(db: Queryable, orgId: string, id: string): Promise<string | undefined> {
  const { rows } = await db.query<{ name: string }>('DELETE FROM rules WHERE org_id = $1 AND id = $2 RETURNING name', [orgId, id]);
  return rows[0]?.name;
}

const STATE = { name: 'automation_rule_state_v2', text: 'SELECT id, name, status, secret_enc FROM rules WHERE org_id = $1 AND id = $2' };

export interface RuleState {
  id: string;
  name: string;
  status: RuleStatus;
  /** The signing secret of http_request steps, encrypted (null: the rule has none yet). */
  secret_enc: string | null;
}

/** Just what the runner needs before each run: is the rule still there and active, and its signing secret. */
export async function ruleState(db: Queryable, orgId: string, id: string): Promise<RuleState | undefined> {
  const { rows } = await db.query<RuleState>({ ...STATE, values: [orgId, id] });
  return rows[0];
}

/** Replace a rule's signing secret (encrypted by the caller). */
export async function setSecret(db: Queryable, orgId: string, id: string, secretEnc: string): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE rules SET secret_enc = $3 WHERE org_id = $1 AND id = $2', [orgId, id, secretEnc]);
  return rowCount === 1;
}

const ACTIVE_OF_ORG = {
  name: 'automation_active_rules_of_org_v2',
  text: `SELECT id, org_id, name, trigger_type, conditions, keywords, trigger_config, actions, status, created_at FROM rules
         WHERE org_id = $1 AND status = 'active' ORDER BY created_at, id`,
};

/** Every active rule of an org, oldest first (the rule cache holds them per org). */
export async function activeRulesOfOrg(db: Queryable, orgId: string): Promise<RuleRow[]> {
  const { rows } = await db.query<RuleRow>({ ...ACTIVE_OF_ORG, values: [orgId] });
  return rows;
}

/** The names of the org's rules whose actions use this template (a template in use is not deleted). */
export async function rulesUsingTemplate(db: Queryable, orgId: string, templateId: string): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    // Anywhere in the tree: steps inside if steps use templates too.
    `SELECT r.name FROM rules r WHERE r.org_id = $1
       AND jsonb_path_exists(r.actions, 'strict $.** ? (@.templateId == $id || @.template == $id)', jsonb_build_object('id', $2::text))
     ORDER BY r.name LIMIT 5`,
    [orgId, templateId],
  );
  return rows.map((r) => r.name);
}
