import { invalid } from '@crm/grpc-kit';
import { isUuid } from '../ids';
import { rejectNul } from '../text';
import { CONVERSATION_PRIORITIES, CONVERSATION_STATUSES, type ConversationPriority, PRIORITY_MESSAGE } from './conversations';
import { CONTENT_MAX, contentType } from './messages';
import { CONVERSATION_NOTE_MAX } from './notes';

/**
 * Macros (issue #29): a named list of actions an agent runs on a conversation in one click. Each action takes the
 * fields of the single endpoint that does the same thing (a send's content, a note's content, an assignee, a
 * status, a priority, a folder, a snooze), so a client writes them the same way in both places.
 */
export const MACRO_ACTION_TYPES = ['send_message', 'add_note', 'assign', 'set_status', 'set_priority', 'add_to_folder', 'snooze'] as const;
export type MacroActionType = (typeof MACRO_ACTION_TYPES)[number];

export const MACRO_NAME_MAX = 100;
/** Most actions of one macro: a run is one request doing them one after another. */
export const MACRO_ACTIONS_MAX = 20;
export const MACRO_ACTIONS_EMPTY = 'must list at least one action';
export const MACRO_ACTIONS_TOO_MANY = `must list at most ${MACRO_ACTIONS_MAX} actions`;

/** set_status takes any status but snoozed: a snooze needs its time, which is the snooze action's. */
export const MACRO_STATUSES = CONVERSATION_STATUSES.filter((s) => s !== 'snoozed') as Exclude<(typeof CONVERSATION_STATUSES)[number], 'snoozed'>[];
export const MACRO_STATUS_MESSAGE = `must be one of ${MACRO_STATUSES.join(', ')} (snooze with the snooze action)`;

/** A snooze of a macro: `minutes` from the run (at most 90 days), or a fixed `snoozedUntil`. */
export const SNOOZE_MINUTES_MAX = 90 * 24 * 60;
export const SNOOZE_MINUTES_MESSAGE = `must be a whole number of minutes from 1 to ${SNOOZE_MINUTES_MAX}`;
export const SNOOZE_ONE_OF = 'give exactly one of minutes and snoozedUntil';

export type MacroAction =
  | { type: 'send_message'; content: string; contentType: string }
  | { type: 'add_note'; content: string }
  | { type: 'assign'; assigneeId: string | null; teamId?: string | null }
  | { type: 'set_status'; status: (typeof MACRO_STATUSES)[number] }
  | { type: 'set_priority'; priority: ConversationPriority | null }
  | { type: 'add_to_folder'; folderId: string }
  | { type: 'snooze'; minutes: number }
  | { type: 'snooze'; snoozedUntil: string };

/**
 * A macro action as it travels over gRPC (proto3 optionals absent when unset). A nullable field is "" for null:
 * assigneeId "" is nobody, teamId "" no team (absent: the conversation keeps its team), priority "" none.
 */
export interface MacroActionInput {
  type?: string;
  content?: string;
  contentType?: string;
  assigneeId?: string;
  teamId?: string;
  status?: string;
  priority?: string;
  folderId?: string;
  minutes?: number;
  snoozedUntil?: string;
}

/** A priority as sent over gRPC: "" is none (null); anything else one of CONVERSATION_PRIORITIES. */
export function priorityOf(value: string | undefined, field = 'priority'): ConversationPriority | null {
  if (value === undefined) throw invalid(field, `is required (${CONVERSATION_PRIORITIES.join(', ')}, or null)`);
  if (value === '') return null;
  if (!(CONVERSATION_PRIORITIES as readonly string[]).includes(value)) throw invalid(field, PRIORITY_MESSAGE);
  return value as ConversationPriority;
}

function text(path: string, value: string | undefined, max: number): string {
  rejectNul(value, path);
  if (value === undefined || value.trim() === '') throw invalid(path, 'is required');
  if (value.length > max) throw invalid(path, `must be at most ${max} characters`);
  return value;
}

function id(path: string, value: string | undefined, what: string): string {
  if (value === undefined || value === '') throw invalid(path, 'is required');
  if (!isUuid(value)) throw invalid(path, `must be a ${what} id`);
  return value.toLowerCase();
}

function nullableId(path: string, value: string | undefined, what: string): string | null {
  return value === '' ? null : id(path, value, what);
}

/** A shared rule's 400, its field renamed to the action's path (`contentType` → `actions[0].contentType`). */
function at<T>(path: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    const issue = (err as { details?: Array<{ field: string; message: string }> }).details?.[0];
    if (issue) throw invalid(`${path}.${issue.field}`, issue.message);
    throw err;
  }
}

function snoozeOf(path: string, a: MacroActionInput): MacroAction {
  const hasMinutes = a.minutes !== undefined;
  const hasUntil = a.snoozedUntil !== undefined && a.snoozedUntil !== '';
  if (hasMinutes === hasUntil) throw invalid(`${path}.minutes`, SNOOZE_ONE_OF);
  if (hasMinutes) {
    const m = a.minutes!;
    if (!Number.isInteger(m) || m < 1 || m > SNOOZE_MINUTES_MAX) throw invalid(`${path}.minutes`, SNOOZE_MINUTES_MESSAGE);
    return { type: 'snooze', minutes: m };
  }
  const until = new Date(a.snoozedUntil!);
  // Whether it still lies ahead is decided when the macro runs (a stored time may pass meanwhile).
  if (!/^\d{4}-\d{2}-\d{2}T/.test(a.snoozedUntil!) || Number.isNaN(until.getTime()) || until.getUTCFullYear() > 9999) {
    throw invalid(`${path}.snoozedUntil`, 'must be an ISO 8601 timestamp in years 0001-9999');
  }
  return { type: 'snooze', snoozedUntil: until.toISOString() };
}

/** One action, with 400s naming `actions[i].<field>`; ids are checked for shape here, for existence when the macro runs. */
export function macroAction(a: MacroActionInput, i: number): MacroAction {
  const path = `actions[${i}]`;
  const type = (a.type ?? '').trim();
  if (!type) throw invalid(`${path}.type`, 'is required');
  switch (type) {
    case 'send_message':
      return { type, content: text(`${path}.content`, a.content, CONTENT_MAX), contentType: at(path, () => contentType(a.contentType)) };
    case 'add_note':
      return { type, content: text(`${path}.content`, a.content?.trim(), CONVERSATION_NOTE_MAX) };
    case 'assign': {
      const assigneeId = a.assigneeId === undefined ? undefined : nullableId(`${path}.assigneeId`, a.assigneeId, 'user');
      if (assigneeId === undefined) throw invalid(`${path}.assigneeId`, 'is required (a user id, or null)');
      return a.teamId === undefined ? { type, assigneeId } : { type, assigneeId, teamId: nullableId(`${path}.teamId`, a.teamId, 'team') };
    }
    case 'set_status': {
      if (!a.status) throw invalid(`${path}.status`, 'is required');
      if (!(MACRO_STATUSES as string[]).includes(a.status)) throw invalid(`${path}.status`, MACRO_STATUS_MESSAGE);
      return { type, status: a.status as (typeof MACRO_STATUSES)[number] };
    }
    case 'set_priority':
      return { type, priority: priorityOf(a.priority, `${path}.priority`) };
    case 'add_to_folder':
      return { type, folderId: id(`${path}.folderId`, a.folderId, 'chat folder') };
    case 'snooze':
      return snoozeOf(path, a);
    default:
      throw invalid(`${path}.type`, `must be one of ${MACRO_ACTION_TYPES.join(', ')}`);
  }
}

export function macroActions(inputs: MacroActionInput[] | undefined): MacroAction[] {
  const list = inputs ?? [];
  if (list.length === 0) throw invalid('actions', MACRO_ACTIONS_EMPTY);
  if (list.length > MACRO_ACTIONS_MAX) throw invalid('actions', MACRO_ACTIONS_TOO_MANY);
  return list.map(macroAction);
}
