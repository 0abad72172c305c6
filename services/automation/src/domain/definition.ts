import { AppError, invalid } from '@crm/grpc-kit';
import { automationRules as rules, isUuid, messagingRules } from '@crm/validation';
import { Condition, ConditionValue, knownFields, OPERATORS, Operator, Scalar, TRIGGER_TYPES, TriggerDef, TriggerType } from './triggers';

/**
 * Validation of a rule's trigger and actions, with 400s that name the field the way a client wrote it
 * (`trigger.conditions[0].operator`, `actions[1].userId`). Pure: checks that need a lookup (template and
 * user ids) return what to look up, and rules.ts does it.
 */

export const ACTION_TYPES = [
  'send_message',
  'send_notification',
  'assign_user',
  'assign_round_robin',
  'add_tag',
  'wait',
  'create_task',
  'set_priority',
] as const;

/** create_task's assignTo that names no user: whoever the event's conversation (else the contact's latest) is assigned to. */
export const CONVERSATION_ASSIGNEE = 'conversation_assignee';
export type ActionType = (typeof ACTION_TYPES)[number];

export type ActionDef =
  | { type: 'send_message'; template?: string; templateId?: string }
  | {
      type: 'send_notification';
      template?: string;
      templateId?: string;
      title?: string;
      message?: string;
      userId?: string;
      notificationType?: string;
    }
  | { type: 'assign_user'; userId: string }
  | { type: 'assign_round_robin' }
  | { type: 'add_tag'; tag: string }
  | { type: 'wait'; duration: string }
  | { type: 'create_task'; title: string; dueInMinutes?: number; assignTo?: string }
  /** null: the conversation's priority is cleared (none). */
  | { type: 'set_priority'; priority: messagingRules.ConversationPriority | null };

/** The Action message as it arrives over gRPC (proto3 optionals absent when unset). */
export interface ActionInput {
  type?: string;
  template?: string;
  templateId?: string;
  title?: string;
  message?: string;
  userId?: string;
  tag?: string;
  duration?: string;
  notificationType?: string;
  dueInMinutes?: number;
  assignTo?: string;
  /** set_priority: "" is none (proto3 strings have no null). */
  priority?: string;
}

export interface TriggerInput {
  type?: string;
  conditions?: Array<{ field?: string; operator?: string; valueJson?: string }>;
  keywords?: string[];
}

/** The limits the gateway's schemas are built from too (@crm/validation automationRules). */
export const LIMITS = rules.RULE_LIMITS;

const SLUG = /^[a-z][a-z0-9_]{0,49}$/;

/** "45s", "10m", "2h", "3d", or a plain number of seconds → seconds; undefined when malformed. */
export function parseDuration(raw: string): number | undefined {
  const m = /^\s*(\d{1,9})\s*(s|m|h|d)?\s*$/i.exec(raw);
  if (!m) return undefined;
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86_400 }[(m[2] ?? 's').toLowerCase() as 's' | 'm' | 'h' | 'd'];
}

function isScalar(v: unknown): v is Scalar {
  return typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

function comparable(v: unknown): boolean {
  if (typeof v === 'number') return Number.isFinite(v);
  if (typeof v !== 'string' || v.trim() === '') return false;
  return Number.isFinite(Number(v)) || (/^\d{4}-\d{2}-\d{2}/.test(v) && !Number.isNaN(Date.parse(v)));
}

function conditionValue(path: string, operator: Operator, valueJson: string | undefined): ConditionValue {
  if (valueJson === undefined || valueJson === '') throw invalid(`${path}.value`, 'is required');
  let value: unknown;
  try {
    value = JSON.parse(valueJson);
  } catch {
    throw invalid(`${path}.value`, 'is not valid JSON');
  }
  switch (operator) {
    case 'in':
      if (!Array.isArray(value) || value.length === 0) throw invalid(`${path}.value`, 'must be a non-empty array for operator in');
      if (value.length > LIMITS.inValues) throw invalid(`${path}.value`, `must have at most ${LIMITS.inValues} values`);
      value.forEach((v, i) => {
        if (!isScalar(v)) throw invalid(`${path}.value[${i}]`, 'must be a string, number or boolean');
      });
      return value as Scalar[];
    case 'gte':
    case 'lte':
      if (!comparable(value)) throw invalid(`${path}.value`, `must be a number or an ISO date for operator ${operator}`);
      return value as Scalar;
    case 'contains':
      if (typeof value !== 'string' || value.trim() === '') throw invalid(`${path}.value`, 'must be a non-empty string for operator contains');
      return value;
    default:
      if (!isScalar(value)) throw invalid(`${path}.value`, `must be a string, number or boolean for operator ${operator}`);
      return value;
  }
}

export function validateTrigger(input: TriggerInput | null | undefined): TriggerDef {
  if (!input) throw invalid('trigger', 'is required');
  const type = (input.type ?? '').trim();
  if (!type) throw invalid('trigger.type', 'is required');
  if (!(TRIGGER_TYPES as readonly string[]).includes(type)) throw invalid('trigger.type', `must be one of ${TRIGGER_TYPES.join(', ')}`);
  const t = type as TriggerType;
  const raw = input.conditions ?? [];
  if (raw.length > LIMITS.conditions) throw invalid('trigger.conditions', rules.TOO_MANY_CONDITIONS);
  const fields = knownFields(t);
  const conditions: Condition[] = raw.map((c, i) => {
    const path = `trigger.conditions[${i}]`;
    const field = (c.field ?? '').trim();
    if (!field) throw invalid(`${path}.field`, 'is required');
    if (!fields.includes(field)) throw invalid(`${path}.field`, `is not a field of ${t} (one of ${fields.join(', ')})`);
    const operator = (c.operator ?? '').trim();
    if (!operator) throw invalid(`${path}.operator`, 'is required');
    if (!(OPERATORS as readonly string[]).includes(operator)) throw invalid(`${path}.operator`, `must be one of ${OPERATORS.join(', ')}`);
    return { field, operator: operator as Operator, value: conditionValue(path, operator as Operator, c.valueJson) };
  });
  const keywords = (input.keywords ?? []).map((k) => k.trim());
  if (t === 'keyword') {
    if (keywords.length === 0) throw invalid('trigger.keywords', 'is required for a keyword trigger (at least one keyword)');
    if (keywords.length > LIMITS.keywords) throw invalid('trigger.keywords', rules.TOO_MANY_KEYWORDS);
    keywords.forEach((k, i) => {
      if (!/[\p{L}\p{N}]/u.test(k)) throw invalid(`trigger.keywords[${i}]`, 'must contain a letter or digit');
      if (k.length > LIMITS.keywordLength) throw invalid(`trigger.keywords[${i}]`, rules.KEYWORD_TOO_LONG);
    });
  } else if (keywords.length > 0) {
    throw invalid('trigger.keywords', 'is only for keyword triggers');
  }
  return { type: t, conditions, keywords: t === 'keyword' ? [...new Set(keywords)] : [] };
}

function text(path: string, v: string | undefined, max: number, required = false): string | undefined {
  const s = v?.trim();
  if (!s) {
    if (required) throw invalid(path, 'is required');
    return undefined;
  }
  if (s.length > max) throw invalid(path, `must be at most ${max} characters`);
  return s;
}

function uuidField(path: string, v: string | undefined, what: string): string | undefined {
  const s = v?.trim();
  if (!s) return undefined;
  if (!isUuid(s)) throw invalid(path, `must be a ${what} id`);
  return s.toLowerCase();
}

/** A `template` that is a UUID names a stored template; any other text is the message itself. */
function templateRef(path: string, a: ActionInput): { template?: string; templateId?: string } {
  const templateId = uuidField(`${path}.templateId`, a.templateId, 'template');
  const template = text(`${path}.template`, a.template, LIMITS.text);
  if (templateId && template) throw invalid(`${path}.template`, 'give either template or templateId, not both');
  if (templateId) return { templateId };
  if (template && isUuid(template)) return { template: template.toLowerCase() };
  return template ? { template } : {};
}

export function validateAction(a: ActionInput, i: number): ActionDef {
  const path = `actions[${i}]`;
  const type = (a.type ?? '').trim();
  if (!type) throw invalid(`${path}.type`, 'is required');
  switch (type) {
    case 'send_message': {
      const ref = templateRef(path, a);
      if (!ref.template && !ref.templateId) throw invalid(`${path}.template`, 'is required (a template id or the message text)');
      return { type, ...ref };
    }
    case 'send_notification': {
      const ref = templateRef(path, a);
      const message = text(`${path}.message`, a.message, LIMITS.text);
      const title = text(`${path}.title`, a.title, LIMITS.title);
      if (!ref.template && !ref.templateId && !message) throw invalid(`${path}.message`, 'is required (or a template)');
      const userId = uuidField(`${path}.userId`, a.userId, 'user');
      const notificationType = text(`${path}.notificationType`, a.notificationType, LIMITS.slug);
      if (notificationType && !SLUG.test(notificationType)) throw invalid(`${path}.notificationType`, 'must be lower-case letters, digits and _');
      return {
        type,
        ...ref,
        ...(title ? { title } : {}),
        ...(message ? { message } : {}),
        ...(userId ? { userId } : {}),
        ...(notificationType ? { notificationType } : {}),
      };
    }
    case 'assign_user': {
      const userId = uuidField(`${path}.userId`, a.userId, 'user');
      if (!userId) throw invalid(`${path}.userId`, 'is required');
      return { type, userId };
    }
    case 'assign_round_robin':
      // No settings of its own: the conversation's account says who is in the rotation.
      return { type };
    case 'add_tag':
      return { type, tag: text(`${path}.tag`, a.tag, LIMITS.tag, true)! };
    case 'wait': {
      const raw = a.duration?.trim();
      if (!raw) throw invalid(`${path}.duration`, 'is required (e.g. "30s", "10m", "2h", "1d" or a number of seconds)');
      const seconds = parseDuration(raw);
      if (seconds === undefined) throw invalid(`${path}.duration`, 'must be like "30s", "10m", "2h", "1d" or a number of seconds');
      if (seconds < 1 || seconds > LIMITS.waitSeconds) throw invalid(`${path}.duration`, 'must be between 1 second and 90 days');
      return { type, duration: raw.replace(/\s+/g, '').toLowerCase() };
    }
    case 'create_task': {
      const title = text(`${path}.title`, a.title, LIMITS.title, true)!;
      const maxMinutes = LIMITS.waitSeconds / 60;
      const m = a.dueInMinutes;
      if (m !== undefined && (!Number.isInteger(m) || m < 0 || m > maxMinutes))
        throw invalid(`${path}.dueInMinutes`, `must be between 0 and ${maxMinutes} minutes`);
      const raw = a.assignTo?.trim();
      const assignTo = !raw
        ? undefined
        : raw === CONVERSATION_ASSIGNEE
          ? raw
          : uuidField(`${path}.assignTo`, raw, `user (or "${CONVERSATION_ASSIGNEE}")`);
      return { type, title, ...(m !== undefined ? { dueInMinutes: m } : {}), ...(assignTo ? { assignTo } : {}) };
    }
    case 'set_priority':
      // The rules of PUT /conversations/:id/priority (messaging checks them again when the action runs).
      return { type, priority: messagingRules.priorityOf(a.priority, `${path}.priority`) };
    default:
      throw invalid(`${path}.type`, `must be one of ${ACTION_TYPES.join(', ')}`);
  }
}

/**
 * A rule started by a task event must not create tasks: each task it made would start it again (task_created at
 * once, task_due as soon as the new task falls due), a loop no run could see. 400 naming the action's type.
 */
export function checkActionsFitTrigger(trigger: TriggerType, actions: ActionDef[]): void {
  if (!trigger.startsWith('task_')) return;
  const i = actions.findIndex((a) => a.type === 'create_task');
  if (i >= 0) throw invalid(`actions[${i}].type`, `create_task cannot follow a ${trigger} trigger (each task it creates would start the rule again)`);
}

export function validateActions(inputs: ActionInput[]): ActionDef[] {
  if (inputs.length > LIMITS.actions) throw invalid('actions', rules.TOO_MANY_ACTIONS);
  return inputs.map(validateAction);
}

/** Ids the actions refer to, with the field to blame when one does not exist. */
export function referencesOf(actions: ActionDef[]): { templates: Array<{ id: string; path: string }>; users: Array<{ id: string; path: string }> } {
  const templates: Array<{ id: string; path: string }> = [];
  const users: Array<{ id: string; path: string }> = [];
  actions.forEach((a, i) => {
    if (a.type === 'send_message' || a.type === 'send_notification') {
      if (a.templateId) templates.push({ id: a.templateId, path: `actions[${i}].templateId` });
      else if (a.template && isUuid(a.template)) templates.push({ id: a.template, path: `actions[${i}].template` });
    }
    if ((a.type === 'assign_user' || a.type === 'send_notification') && a.userId) users.push({ id: a.userId, path: `actions[${i}].userId` });
    if (a.type === 'create_task' && a.assignTo && a.assignTo !== CONVERSATION_ASSIGNEE)
      users.push({ id: a.assignTo, path: `actions[${i}].assignTo` });
  });
  return { templates, users };
}

export function validateName(v: string | undefined): string {
  return text('name', v, LIMITS.name, true)!;
}

export function validateDescription(v: string | undefined): string {
  return text('description', v, LIMITS.description) ?? '';
}

/** A rule's `type` is a label the client chooses for grouping (the spec shows `sequence`). */
export function validateRuleType(v: string | undefined): string {
  const t = v?.trim() || 'sequence';
  if (!SLUG.test(t)) throw invalid('type', 'must be lower-case letters, digits and _ (e.g. sequence)');
  return t;
}

export const ruleIncomplete = () =>
  new AppError('failed_precondition', 'A rule needs at least one action before it can be activated', { code: 'rule_incomplete' });
