import { EVENT_OF_TRIGGER, TIMED_TRIGGER_TYPES, TRIGGER_TYPES, type TimedTriggerType, type TriggerType } from '@crm/events';
import { containsPhrase, containsText, sameText } from '../text';

/**
 * What starts a rule, what a condition may look at, and how conditions are judged. No I/O here: the
 * consumer hands in the facts (event data, and the contact when a condition needs one). The trigger names and
 * their events are a contract with the gateway, so they live in @crm/events (triggers.ts).
 */
export { TIMED_TRIGGER_TYPES, TRIGGER_TYPES, type TimedTriggerType, type TriggerType };

export const OPERATORS = ['equals', 'not_equals', 'contains', 'gte', 'lte', 'in'] as const;
export type Operator = (typeof OPERATORS)[number];

export type Scalar = string | number | boolean;
export type ConditionValue = Scalar | Scalar[];

export interface Condition {
  field: string;
  operator: Operator;
  value: ConditionValue;
}

/** A schedule trigger's own settings: when (a cron in a time zone) and for whom (each member of a list, or nobody). */
export interface ScheduleSettings {
  cron: string;
  timezone: string;
  listId?: string;
}

/** A conversation_idle trigger's own settings: how long without a message, and the status it must have then. */
export interface IdleSettings {
  minutes: number;
  status?: string;
}

export interface TriggerDef {
  type: TriggerType;
  conditions: Condition[];
  keywords: string[];
  schedule?: ScheduleSettings;
  idle?: IdleSettings;
}

/** The event type a run of a timed trigger records (no event of the catalogue started it: automation's timer did). */
export const EVENT_OF_TIMED_TRIGGER: Readonly<Record<TimedTriggerType, string>> = {
  schedule: 'automation.schedule',
  conversation_idle: 'automation.conversation_idle',
};

export function isTimedTrigger(t: string): t is TimedTriggerType {
  return (TIMED_TRIGGER_TYPES as readonly string[]).includes(t);
}

export function triggersOfEvent(eventType: string): TriggerType[] {
  return TRIGGER_TYPES.filter((t) => (isTimedTrigger(t) ? EVENT_OF_TIMED_TRIGGER[t] : EVENT_OF_TRIGGER[t]) === eventType);
}

/** Fields of the contact (the internal Contact shape carried by contact.* events). */
const CONTACT_FIELDS = ['id', 'name', 'email', 'phone', 'source', 'status', 'statusId', 'assignedUserId', 'tags', 'leadScore', 'hasChatnet'];
/** What crm's GetContactBrief returns, for triggers whose event carries only a contact id. */
const BRIEF_FIELDS = ['id', 'name', 'email', 'phone', 'status', 'tags', 'assignedUserId', 'chatnetUid'];
const MESSAGE_FIELDS = [
  'content',
  'contentType',
  'threadType',
  'threadId',
  'senderName',
  'senderUid',
  'chatnetAccountId',
  'conversationId',
  'contactId',
];
const CONVERSATION_FIELDS = ['id', 'type', 'chatnetAccountId', 'threadId', 'contactId'];
/** messaging's conversation.note_created: a private note (its preview, who wrote it, whom it mentions). */
const NOTE_FIELDS = ['conversationId', 'noteId', 'authorId', 'authorName', 'mentions', 'contentPreview', 'contactId', 'contactName'];
const ASSIGNED_FIELDS = ['conversationId', 'contactId', 'assigneeId', 'teamId', 'previousAssigneeId', 'assignedBy', 'reason'];
/** messaging's conversation.reply_overdue: an assignee left the customer waiting past the account's reply timeout. */
const REPLY_OVERDUE_FIELDS = [
  'conversationId',
  'contactId',
  'chatnetAccountId',
  'assigneeId',
  'contactName',
  'waitingSince',
  'dueAt',
  'replyTimeoutMinutes',
];
const STATUS_CHANGED_FIELDS = ['conversationId', 'contactId', 'status', 'previousStatus', 'snoozedUntil', 'changedBy'];
const PRIORITY_CHANGED_FIELDS = ['conversationId', 'contactId', 'assigneeId', 'priority', 'previousPriority', 'changedBy'];
/** messaging's conversation.sla_breached: the window missed (first_response, next_response, resolution) and its policy. */
const SLA_BREACHED_FIELDS = ['conversationId', 'contactId', 'chatnetAccountId', 'assigneeId', 'policyId', 'target', 'dueAt', 'breachedAt'];
/** messaging's conversation.csat_received: the contact's rating of a closed conversation. */
const CSAT_FIELDS = ['conversationId', 'contactId', 'chatnetAccountId', 'assigneeId', 'rating', 'comment', 'respondedAt'];
/** crm's task.* events: the task as the API shows it. */
const TASK_FIELDS = ['id', 'title', 'notes', 'dueAt', 'status', 'assigneeId', 'contactId', 'conversationId', 'createdBy'];
/** messaging's message.recalled and message.reaction: who took a message back, or reacted to it, and where. */
const RECALL_FIELDS = ['messageId', 'conversationId', 'contactId', 'chatnetAccountId', 'assigneeId', 'recalledAt', 'recalledBy', 'userId', 'fromUid'];
const REACTION_FIELDS = ['messageId', 'conversationId', 'contactId', 'chatnetAccountId', 'assigneeId', 'emoji', 'by', 'userId', 'fromUid', 'at'];
/** The connector's friend_request.accepted: the request, the account that sent it and the network user who accepted. */
const FRIEND_REQUEST_FIELDS = ['id', 'chatnetAccountId', 'chatnetUid', 'acceptedAt'];
/** A schedule firing: its time, the list it runs over (if any) and, for a list, the member it runs for. */
const SCHEDULE_FIELDS = ['scheduledAt', 'timezone', 'listId', 'contactId'];
/** A conversation that had no message for `minutes` since `idleSince` (its last message), and its status then. */
const IDLE_FIELDS = ['conversationId', 'contactId', 'idleSince', 'minutes', 'status'];
const APPOINTMENT_FIELDS = ['id', 'title', 'description', 'type', 'location', 'status', 'scheduledAt', 'duration', 'assignedUserId', 'contactId'];

/** Per trigger: the name of its own record, its fields (usable bare or prefixed), and whether `contact.*` needs a lookup. */
const SUBJECT: Record<TriggerType, { prefix: string; fields: string[]; contactLookup: boolean }> = {
  contact_created: { prefix: 'contact', fields: CONTACT_FIELDS, contactLookup: false },
  message_received: { prefix: 'message', fields: MESSAGE_FIELDS, contactLookup: true },
  keyword: { prefix: 'message', fields: MESSAGE_FIELDS, contactLookup: true },
  conversation_created: { prefix: 'conversation', fields: CONVERSATION_FIELDS, contactLookup: true },
  conversation_assigned: { prefix: 'conversation', fields: ASSIGNED_FIELDS, contactLookup: true },
  conversation_reply_overdue: { prefix: 'conversation', fields: REPLY_OVERDUE_FIELDS, contactLookup: true },
  conversation_status_changed: { prefix: 'conversation', fields: STATUS_CHANGED_FIELDS, contactLookup: true },
  conversation_priority_changed: { prefix: 'conversation', fields: PRIORITY_CHANGED_FIELDS, contactLookup: true },
  conversation_sla_breached: { prefix: 'conversation', fields: SLA_BREACHED_FIELDS, contactLookup: true },
  conversation_csat_received: { prefix: 'csat', fields: CSAT_FIELDS, contactLookup: true },
  appointment_created: { prefix: 'appointment', fields: APPOINTMENT_FIELDS, contactLookup: true },
  conversation_note_created: { prefix: 'note', fields: NOTE_FIELDS, contactLookup: true },
  task_created: { prefix: 'task', fields: TASK_FIELDS, contactLookup: true },
  task_completed: { prefix: 'task', fields: TASK_FIELDS, contactLookup: true },
  task_due: { prefix: 'task', fields: TASK_FIELDS, contactLookup: true },
  message_recalled: { prefix: 'recall', fields: RECALL_FIELDS, contactLookup: true },
  message_reaction: { prefix: 'reaction', fields: REACTION_FIELDS, contactLookup: true },
  friend_request_accepted: { prefix: 'friendRequest', fields: FRIEND_REQUEST_FIELDS, contactLookup: false },
  schedule: { prefix: 'schedule', fields: SCHEDULE_FIELDS, contactLookup: true },
  conversation_idle: { prefix: 'conversation', fields: IDLE_FIELDS, contactLookup: true },
};

/** The name a trigger's record goes by in conditions and templates (`note.authorName`), from its event type. */
export function subjectPrefixOf(eventType: string): string {
  const [trigger] = triggersOfEvent(eventType);
  return trigger ? SUBJECT[trigger].prefix : eventType.split('.')[0];
}

/** Every field name a condition of this trigger may use. */
export function knownFields(trigger: TriggerType): string[] {
  const s = SUBJECT[trigger];
  const own = [...s.fields, ...s.fields.map((f) => `${s.prefix}.${f}`)];
  return s.contactLookup ? [...own, ...BRIEF_FIELDS.map((f) => `contact.${f}`)] : own;
}

/** Does judging these conditions need the contact fetched from crm? */
export function needsContactLookup(trigger: TriggerType, conditions: Condition[]): boolean {
  return SUBJECT[trigger].contactLookup && conditions.some((c) => c.field.startsWith('contact.'));
}

export interface Facts {
  /** The event's own record (contact, message, conversation or appointment). */
  subject: Record<string, unknown>;
  /** The contact, when known (the subject itself for contact triggers). */
  contact?: Record<string, unknown>;
}

/** The record a trigger's event is about, from the event data (see the events contract). */
export function subjectOf(eventType: string, data: unknown): Record<string, unknown> {
  const d = (data ?? {}) as Record<string, unknown>;
  if (eventType === 'contact.created') return (d.contact ?? {}) as Record<string, unknown>;
  if (eventType === 'appointment.created') return (d.appointment ?? {}) as Record<string, unknown>;
  if (eventType.startsWith('task.')) return (d.task ?? {}) as Record<string, unknown>;
  return d;
}

/** The contact a trigger's event concerns, if any. */
export function contactIdOf(eventType: string, data: unknown): string | undefined {
  const subject = subjectOf(eventType, data);
  const id = eventType === 'contact.created' ? subject.id : subject.contactId;
  return typeof id === 'string' && id ? id : undefined;
}

export function valueOf(trigger: TriggerType, facts: Facts, field: string): unknown {
  const s = SUBJECT[trigger] as (typeof SUBJECT)[TriggerType] | undefined;
  // A run started by hand: its record is what the person gave (contactId, conversationId), and the contact.
  if (!s) return field.startsWith('contact.') ? facts.contact?.[field.slice('contact.'.length)] : facts.subject[field];
  if (field.startsWith(`${s.prefix}.`)) return facts.subject[field.slice(s.prefix.length + 1)];
  if (field.startsWith('contact.')) return facts.contact?.[field.slice('contact.'.length)];
  return facts.subject[field];
}

function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

/** ISO dates compare as instants; anything else that is not a date gives undefined. */
function asTime(v: unknown): number | undefined {
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(v)) return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

function equalsOne(actual: unknown, expected: Scalar): boolean {
  if (actual === undefined || actual === null) return false;
  if (Array.isArray(actual)) return actual.some((a) => equalsOne(a, expected));
  if (typeof expected === 'number') return asNumber(actual) === expected;
  if (typeof expected === 'boolean') return actual === expected || String(actual).toLowerCase() === String(expected);
  const n = asNumber(expected);
  if (typeof actual === 'number') return n === actual;
  return sameText(String(actual), expected);
}

function order(actual: unknown, expected: Scalar): number | undefined {
  const a = asNumber(actual);
  const e = asNumber(expected);
  if (a !== undefined && e !== undefined) return a - e;
  const at = asTime(actual);
  const et = asTime(expected);
  if (at !== undefined && et !== undefined) return at - et;
  return undefined;
}

export function holds(c: Condition, actual: unknown): boolean {
  switch (c.operator) {
    case 'equals':
      return equalsOne(actual, c.value as Scalar);
    case 'not_equals':
      return !equalsOne(actual, c.value as Scalar);
    case 'contains':
      if (Array.isArray(actual)) return actual.some((a) => equalsOne(a, c.value as Scalar));
      return typeof actual === 'string' && containsText(actual, String(c.value));
    case 'gte': {
      const d = order(actual, c.value as Scalar);
      return d !== undefined && d >= 0;
    }
    case 'lte': {
      const d = order(actual, c.value as Scalar);
      return d !== undefined && d <= 0;
    }
    case 'in':
      return (c.value as Scalar[]).some((v) => equalsOne(actual, v));
  }
}

/** All conditions must hold (AND); a rule without conditions always matches. */
export function conditionsHold(trigger: TriggerDef, facts: Facts): boolean {
  return trigger.conditions.every((c) => holds(c, valueOf(trigger.type, facts, c.field)));
}

/** Keyword triggers: the message content contains one of the keywords (whole words, case and diacritics aware). */
export function keywordMatches(trigger: TriggerDef, facts: Facts): boolean {
  if (trigger.type !== 'keyword') return true;
  const content = facts.subject.content;
  return typeof content === 'string' && trigger.keywords.some((k) => containsPhrase(content, k));
}
