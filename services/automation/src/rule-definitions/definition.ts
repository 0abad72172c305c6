import { knownZone } from '@crm/business-hours';
import { AppError, invalid } from '@crm/grpc-kit';
import { automationRules as rules, isUuid, messagingRules } from '@crm/validation';
import { CronError, nextOccurrence, parseCron } from './cron';
import {
  Condition,
  ConditionValue,
  IdleSettings,
  isTimedTrigger,
  knownFields,
  OPERATORS,
  Operator,
  Scalar,
  ScheduleSettings,
  TRIGGER_TYPES,
  TriggerDef,
  TriggerType,
} from './triggers';

/**
 * Validation of a rule's trigger and actions, with 400s that name the field by its dotted path in the body, array
 * items by index (`trigger.conditions.0.operator`, `actions.2.then.0.url`, as issue #32 writes it). Pure: checks that need a lookup (template and
 * user ids) return what to look up, and rules/rules.ts does it.
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
  'if',
  'http_request',
] as const;

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

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
  /** duration ("10m") or minutes (fractions allowed): one of them. */
  | { type: 'wait'; duration?: string; minutes?: number }
  | { type: 'create_task'; title: string; dueInMinutes?: number; assignTo?: string }
  /** null: the conversation's priority is cleared (none). */
  | { type: 'set_priority'; priority: messagingRules.ConversationPriority | null }
  /** All conditions hold → `then`, otherwise `else` (either may be empty, not both). */
  | { type: 'if'; conditions: Condition[]; then: ActionDef[]; else: ActionDef[] }
  /** Signed with the rule's secret; the answer's status and JSON body become steps.<n>.status / steps.<n>.body. */
  | { type: 'http_request'; url: string; method: HttpMethod; headers: Record<string, string>; bodyTemplate?: string };

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
  conditions?: ConditionInput[];
  then?: ActionInput[];
  else?: ActionInput[];
  minutes?: number | null;
  url?: string;
  method?: string;
  headers?: Record<string, string>;
  bodyTemplate?: string;
}

export interface ConditionInput {
  field?: string;
  operator?: string;
  valueJson?: string;
}

export interface TriggerInput {
  type?: string;
  conditions?: ConditionInput[];
  keywords?: string[];
  cron?: string;
  timezone?: string;
  listId?: string;
  minutes?: number | null;
  status?: string;
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
        if (!isScalar(v)) throw invalid(`${path}.value.${i}`, 'must be a string, number or boolean');
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

/**
 * A step's answer in an if's conditions and in templates: `steps.<n>.status`, `steps.<n>.body.<field>[.<field>…]`, n
 * being the step's place in the run's steps (as the run history lists them, from 0).
 */
export const STEP_FIELD = /^steps\.(\d{1,3})\.(status|body(?:\.[^.\s{}]+)+)$/;

/** Conditions of a trigger (`trigger.conditions`) or of an if step (`actions.0.conditions`, which may also ask steps.*). */
export function validateConditions(raw: ConditionInput[], path: string, t: TriggerType, allowSteps = false): Condition[] {
  if (raw.length > LIMITS.conditions) throw invalid(path, rules.TOO_MANY_CONDITIONS);
  const fields = knownFields(t);
  return raw.map((c, i) => {
    const at = `${path}.${i}`;
    const field = (c.field ?? '').trim();
    if (!field) throw invalid(`${at}.field`, 'is required');
    if (!fields.includes(field) && !(allowSteps && STEP_FIELD.test(field)))
      throw invalid(
        `${at}.field`,
        `is not a field of ${t} (one of ${fields.join(', ')}${allowSteps ? ', steps.<n>.status, steps.<n>.body.<field>' : ''})`,
      );
    const operator = (c.operator ?? '').trim();
    if (!operator) throw invalid(`${at}.operator`, 'is required');
    if (!(OPERATORS as readonly string[]).includes(operator)) throw invalid(`${at}.operator`, `must be one of ${OPERATORS.join(', ')}`);
    return { field, operator: operator as Operator, value: conditionValue(at, operator as Operator, c.valueJson) };
  });
}

export function validateTrigger(input: TriggerInput | null | undefined): TriggerDef {
  if (!input) throw invalid('trigger', 'is required');
  const type = (input.type ?? '').trim();
  if (!type) throw invalid('trigger.type', 'is required');
  if (!(TRIGGER_TYPES as readonly string[]).includes(type)) throw invalid('trigger.type', `must be one of ${TRIGGER_TYPES.join(', ')}`);
  const t = type as TriggerType;
  // Timed triggers have no event to judge: their steps decide (an if step reads the same fields).
  if (isTimedTrigger(t) && (input.conditions ?? []).length > 0)
    throw invalid('trigger.conditions', `are not judged for a ${t} trigger (no event starts it); use an if step`);
  const conditions = validateConditions(input.conditions ?? [], 'trigger.conditions', t);
  const keywords = (input.keywords ?? []).map((k) => k.trim());
  if (t === 'keyword') {
    if (keywords.length === 0) throw invalid('trigger.keywords', 'is required for a keyword trigger (at least one keyword)');
    if (keywords.length > LIMITS.keywords) throw invalid('trigger.keywords', rules.TOO_MANY_KEYWORDS);
    keywords.forEach((k, i) => {
      if (!/[\p{L}\p{N}]/u.test(k)) throw invalid(`trigger.keywords.${i}`, 'must contain a letter or digit');
      if (k.length > LIMITS.keywordLength) throw invalid(`trigger.keywords.${i}`, rules.KEYWORD_TOO_LONG);
    });
  } else if (keywords.length > 0) {
    throw invalid('trigger.keywords', 'is only for keyword triggers');
  }
  const schedule = validateSchedule(t, input);
  const idle = validateIdle(t, input);
  return {
    type: t,
    conditions,
    keywords: t === 'keyword' ? [...new Set(keywords)] : [],
    ...(schedule ? { schedule } : {}),
    ...(idle ? { idle } : {}),
  };
}

/** conversation_idle waits at most this long (as a wait step does). */
const IDLE_MAX_MINUTES = LIMITS.waitSeconds / 60;

/** schedule: `cron` (five fields) and `timezone` (IANA) are required; `listId` is checked against crm by rules/rules.ts. */
function validateSchedule(t: TriggerType, input: TriggerInput): ScheduleSettings | undefined {
  const cron = input.cron?.trim();
  const timezone = input.timezone?.trim();
  const listId = input.listId?.trim();
  if (t !== 'schedule') {
    if (cron) throw invalid('trigger.cron', 'is only for schedule triggers');
    if (timezone) throw invalid('trigger.timezone', 'is only for schedule triggers');
    if (listId) throw invalid('trigger.listId', 'is only for schedule triggers');
    return undefined;
  }
  if (!cron) throw invalid('trigger.cron', 'is required for a schedule trigger (five fields: minute hour day-of-month month day-of-week)');
  if (cron.length > 200) throw invalid('trigger.cron', 'must be at most 200 characters');
  let parsed;
  try {
    parsed = parseCron(cron);
  } catch (err) {
    if (err instanceof CronError) throw invalid('trigger.cron', `is not a valid cron expression: ${err.message}`);
    throw err;
  }
  if (!timezone) throw invalid('trigger.timezone', 'is required for a schedule trigger (an IANA time zone such as Asia/Ho_Chi_Minh, or UTC)');
  if (timezone.length > 64 || !knownZone(timezone)) throw invalid('trigger.timezone', 'must be an IANA time zone such as Asia/Ho_Chi_Minh, or UTC');
  if (!nextOccurrence(parsed, timezone, new Date())) throw invalid('trigger.cron', 'never matches a date (e.g. February 30)');
  if (listId && !isUuid(listId)) throw invalid('trigger.listId', 'must be a customer list id');
  return { cron: cron.replace(/\s+/g, ' '), timezone, ...(listId ? { listId: listId.toLowerCase() } : {}) };
}

/** conversation_idle: `minutes` (at least one second, fractions allowed, as a wait step's) and an optional `status`. */
function validateIdle(t: TriggerType, input: TriggerInput): IdleSettings | undefined {
  const minutes = input.minutes ?? undefined;
  const status = input.status?.trim();
  if (t !== 'conversation_idle') {
    if (minutes !== undefined) throw invalid('trigger.minutes', 'is only for conversation_idle triggers');
    if (status) throw invalid('trigger.status', 'is only for conversation_idle triggers');
    return undefined;
  }
  if (minutes === undefined) throw invalid('trigger.minutes', 'is required for a conversation_idle trigger');
  if (!Number.isFinite(minutes) || minutes * 60 < 1 || minutes > IDLE_MAX_MINUTES)
    throw invalid('trigger.minutes', `must be between 1 second (${1 / 60}) and ${IDLE_MAX_MINUTES} minutes`);
  if (status && !(messagingRules.CONVERSATION_STATUSES as readonly string[]).includes(status))
    throw invalid('trigger.status', `must be one of ${messagingRules.CONVERSATION_STATUSES.join(', ')}`);
  return { minutes, ...(status ? { status } : {}) };
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

/** Where validation is inside the tree of steps: the trigger (for if conditions), how deep, how many steps so far. */
interface Walk {
  trigger: TriggerType;
  depth: number;
  count: { n: number };
}

function validateAction(a: ActionInput, path: string, walk: Walk): ActionDef {
  const type = (a.type ?? '').trim();
  if (!type) throw invalid(`${path}.type`, 'is required');
  if (++walk.count.n > LIMITS.steps) throw invalid(path, `a rule has at most ${LIMITS.steps} steps in all (counting those inside if steps)`);
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
      if (a.minutes !== undefined && a.minutes !== null) {
        if (raw) throw invalid(`${path}.minutes`, 'give either minutes or duration, not both');
        const m = a.minutes;
        if (!Number.isFinite(m) || m * 60 < 1 || m * 60 > LIMITS.waitSeconds)
          throw invalid(`${path}.minutes`, `must be between 1 second (${1 / 60}) and ${LIMITS.waitSeconds / 60} minutes`);
        return { type, minutes: m };
      }
      if (!raw) throw invalid(`${path}.duration`, 'is required (e.g. "30s", "10m", "2h", "1d", a number of seconds, or give minutes)');
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
    case 'if':
      return validateIf(a, path, walk);
    case 'http_request':
      return validateHttpRequest(a, path);
    default:
      throw invalid(`${path}.type`, `must be one of ${ACTION_TYPES.join(', ')}`);
  }
}

function validateIf(a: ActionInput, path: string, walk: Walk): ActionDef {
  if (walk.depth + 1 > LIMITS.nesting) throw invalid(`${path}.type`, `if steps nest at most ${LIMITS.nesting} levels deep`);
  const raw = a.conditions ?? [];
  if (raw.length === 0) throw invalid(`${path}.conditions`, 'is required (at least one condition)');
  const conditions = validateConditions(raw, `${path}.conditions`, walk.trigger, true);
  const inner: Walk = { ...walk, depth: walk.depth + 1 };
  const then = validateList(a.then ?? [], `${path}.then`, inner);
  const otherwise = validateList(a.else ?? [], `${path}.else`, inner);
  if (then.length === 0 && otherwise.length === 0) throw invalid(`${path}.then`, 'is required (then, else or both need a step)');
  return { type: 'if', conditions, then, else: otherwise };
}

/** Headers the request sets itself (framing, the signature): a rule cannot set or forge them. */
const RESERVED_HEADERS = /^(host|content-length|transfer-encoding|connection|keep-alive|upgrade|te|trailer|expect|proxy-.*|webhook-.*)$/i;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;

function validateHttpRequest(a: ActionInput, path: string): ActionDef {
  const raw = text(`${path}.url`, a.url, LIMITS.url, true)!;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(`${path}.url`, 'must be an absolute http or https URL');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) throw invalid(`${path}.url`, 'must be an absolute http or https URL');
  if (url.username || url.password) throw invalid(`${path}.url`, 'must not contain a user or password (send credentials in headers)');
  const method = (a.method?.trim() || 'POST').toUpperCase();
  if (!(HTTP_METHODS as readonly string[]).includes(method)) throw invalid(`${path}.method`, `must be one of ${HTTP_METHODS.join(', ')}`);
  const entries = Object.entries(a.headers ?? {});
  if (entries.length > LIMITS.headers) throw invalid(`${path}.headers`, `must have at most ${LIMITS.headers} headers`);
  const headers: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (!HEADER_NAME.test(name)) throw invalid(`${path}.headers.${name}`, 'is not a valid header name');
    if (RESERVED_HEADERS.test(name)) throw invalid(`${path}.headers.${name}`, 'is set by the request itself and cannot be given');
    if (typeof value !== 'string' || value.length > LIMITS.headerValue || /[\r\n\0]/.test(value))
      throw invalid(`${path}.headers.${name}`, `must be text of at most ${LIMITS.headerValue} characters on one line`);
    headers[name] = value;
  }
  const bodyTemplate = a.bodyTemplate ? a.bodyTemplate : undefined;
  if (bodyTemplate !== undefined && bodyTemplate.length > LIMITS.bodyTemplate)
    throw invalid(`${path}.bodyTemplate`, `must be at most ${LIMITS.bodyTemplate} characters`);
  if (bodyTemplate !== undefined && method === 'GET') throw invalid(`${path}.bodyTemplate`, 'is not sent with GET (use POST, PUT, PATCH or DELETE)');
  return {
    type: 'http_request',
    url: url.toString(),
    method: method as HttpMethod,
    headers,
    ...(bodyTemplate !== undefined ? { bodyTemplate } : {}),
  };
}

function validateList(inputs: ActionInput[], path: string, walk: Walk): ActionDef[] {
  if (inputs.length > LIMITS.actions) throw invalid(path, rules.TOO_MANY_ACTIONS);
  return inputs.map((a, i) => validateAction(a, `${path}.${i}`, walk));
}

/** Every step of a tree of actions with its path in the body (`actions.1.then.0`), in document order. */
export function* stepsOf(actions: ActionDef[], path = 'actions'): Generator<{ action: ActionDef; path: string }> {
  for (let i = 0; i < actions.length; i++) {
    const at = `${path}.${i}`;
    const action = actions[i];
    yield { action, path: at };
    if (action.type === 'if') {
      yield* stepsOf(action.then, `${at}.then`);
      yield* stepsOf(action.else, `${at}.else`);
    }
  }
}

/** Seconds a wait step waits. */
export function waitSeconds(a: Extract<ActionDef, { type: 'wait' }>): number {
  if (a.minutes !== undefined) return Math.round(a.minutes * 60);
  return parseDuration(a.duration ?? '') ?? 0;
}

/**
 * A rule started by a task event must not create tasks: each task it made would start it again (task_created at
 * once, task_due as soon as the new task falls due), a loop no run could see. 400 naming the action's type.
 */
export function checkActionsFitTrigger(trigger: TriggerType, actions: ActionDef[]): void {
  if (!trigger.startsWith('task_')) return;
  for (const { action, path } of stepsOf(actions))
    if (action.type === 'create_task')
      throw invalid(`${path}.type`, `create_task cannot follow a ${trigger} trigger (each task it creates would start the rule again)`);
}

/** A rule's actions, if steps judged with the trigger's fields. */
export function validateActions(inputs: ActionInput[], trigger: TriggerType): ActionDef[] {
  return validateList(inputs, 'actions', { trigger, depth: 0, count: { n: 0 } });
}

/** Ids the actions refer to, with the field to blame when one does not exist. */
export function referencesOf(actions: ActionDef[]): {
  templates: Array<{ id: string; path: string }>;
  users: Array<{ id: string; path: string }>;
} {
  const templates: Array<{ id: string; path: string }> = [];
  const users: Array<{ id: string; path: string }> = [];
  for (const { action: a, path } of stepsOf(actions)) {
    if (a.type === 'send_message' || a.type === 'send_notification') {
      if (a.templateId) templates.push({ id: a.templateId, path: `${path}.templateId` });
      else if (a.template && isUuid(a.template)) templates.push({ id: a.template, path: `${path}.template` });
    }
    if ((a.type === 'assign_user' || a.type === 'send_notification') && a.userId) users.push({ id: a.userId, path: `${path}.userId` });
    if (a.type === 'create_task' && a.assignTo && a.assignTo !== CONVERSATION_ASSIGNEE) users.push({ id: a.assignTo, path: `${path}.assignTo` });
  }
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
