import { rules } from '../shared';

/**
 * Which of the target's fields a merge fills from the source, as pure functions over contacts rows in their
 * JSON form (`to_jsonb(contacts)`), so the same rules hold for columns added later. The target's non-empty values
 * win; lists are united; nothing else about the target changes.
 */
export type JsonRow = Record<string, unknown>;

/** Copied from the source only when the target has none (empty text, no reference, a zero deal value). */
const FILL_WHEN_EMPTY = ['name', 'email', 'phone', 'avatar', 'chatnet_uid', 'status_id', 'assigned_user_id', 'notes', 'deal_value'] as const;
/** United, the target's entries first; tags case-insensitively, as a contact's tags always are. */
const UNITED = ['tags', 'thread_types'] as const;
/** Per-key fill of a JSON object column (custom contact fields), when the column exists. */
const FILLED_OBJECTS = ['custom_fields'] as const;

/** The API name of each column a merge can change (reported in contact.updated `changes` and `filledFields`). */
export const API_FIELD: Record<string, string> = {
  name: 'name',
  email: 'email',
  phone: 'phone',
  avatar: 'avatar',
  chatnet_uid: 'chatnetUid',
  status_id: 'statusId',
  assigned_user_id: 'assignedUserId',
  notes: 'notes',
  deal_value: 'dealValue',
  tags: 'tags',
  thread_types: 'threadTypes',
  custom_fields: 'customFields',
  last_activity: 'lastActivity',
};

function isEmpty(v: unknown): boolean {
  return v === null || v === undefined || v === '' || v === 0;
}

function unite(first: unknown, second: unknown, fold: (s: string) => string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const v of [...asStrings(first), ...asStrings(second)]) {
    const key = fold(v);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(v);
  }
  return out;
}

const asStrings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The columns of `target` to change, with their new values. A tag union beyond a contact's 50 tags keeps the
 * first 50 (the target's own first). lastActivity becomes the later of the two.
 */
export function mergedFields(target: JsonRow, source: JsonRow): JsonRow {
  const out: JsonRow = {};
  for (const col of FILL_WHEN_EMPTY) {
    if (!(col in target)) continue;
    if (isEmpty(target[col]) && !isEmpty(source[col])) out[col] = source[col];
  }
  for (const col of UNITED) {
    if (!(col in target)) continue;
    let united = unite(target[col], source[col], col === 'tags' ? (s) => s.toLowerCase() : (s) => s);
    if (col === 'tags') united = united.slice(0, rules.MAX_TAGS);
    if (!same(united, target[col])) out[col] = united;
  }
  for (const col of FILLED_OBJECTS) {
    if (!(col in target) || !isObject(source[col])) continue;
    const own = isObject(target[col]) ? target[col] : {};
    const filled: Record<string, unknown> = { ...own };
    for (const [key, value] of Object.entries(source[col])) {
      if (isEmpty(own[key]) && !isEmpty(value)) filled[key] = value;
    }
    if (!same(filled, own)) out[col] = filled;
  }
  if ('last_activity' in target && typeof source.last_activity === 'string' && typeof target.last_activity === 'string') {
    if (Date.parse(source.last_activity) > Date.parse(target.last_activity)) out.last_activity = source.last_activity;
  }
  return out;
}

/**
 * What undo writes back: each column the merge changed, to its value before the merge, but only while it still
 * holds what the merge wrote (an edit made since wins).
 */
export function restoredFields(current: JsonRow, before: JsonRow, after: JsonRow): JsonRow {
  const out: JsonRow = {};
  for (const [col, written] of Object.entries(after)) {
    if (col in current && same(normalised(current[col]), normalised(written))) out[col] = before[col];
  }
  return out;
}

/** Timestamps compare as instants (PostgreSQL may print the same moment differently), numbers as numbers. */
function normalised(v: unknown): unknown {
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v) && !Number.isNaN(Date.parse(v))) return Date.parse(v);
  return v;
}

/** The API names of changed columns, for events and the response (bookkeeping columns are not reported). */
export function apiFields(cols: JsonRow): string[] {
  return Object.keys(cols)
    .filter((c) => c !== 'last_activity' && c !== 'thread_types')
    .map((c) => API_FIELD[c] ?? c);
}
