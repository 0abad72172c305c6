import { invalid } from '@crm/grpc-kit';

// A contact's rules: the gateway's zod schemas are built from these, and crm applies the same ones to every
// write that does not come through the gateway's schemas (CSV rows, messaging's upserts, leads, other services).

export const CONTACT_STATUSES = ['new', 'lead', 'customer', 'lost'] as const;
export const THREAD_TYPES = ['user', 'group'] as const;
export const CONTACT_SORTS = ['lastActivity', 'createdAt', 'leadScore'] as const;
export const SORT_DIRECTIONS = ['asc', 'desc'] as const;
export const HAS_CHATNET_FILTERS = ['true', 'false', 'unknown'] as const;
export const BULK_ACTIONS = ['tag', 'untag', 'status', 'assign', 'delete'] as const;

/** Most characters of each free-text field of a contact (and of the list's text filters). */
export const CONTACT_TEXT_MAX = {
  name: 200,
  phone: 40,
  notes: 10_000,
  search: 200,
  source: 40,
  avatar: 2000,
  chatnetUid: 200,
} as const;

/** Most ids one bulk request may name. */
export const BULK_MAX_IDS = 1000;
/** Most cf.<key> filters on one list. */
export const MAX_CUSTOM_FIELD_FILTERS = 10;

export const MAX_TAGS = 50;
export const MAX_TAG_LENGTH = 50;
export const TAG_TOO_LONG = `each tag must be at most ${MAX_TAG_LENGTH} characters`;
export const TOO_MANY_TAGS = `must have at most ${MAX_TAGS} tags`;

/** Trimmed, de-duplicated case-insensitively (first spelling wins), no empties; at most MAX_TAGS. */
export function normaliseTags(tags: readonly string[] | undefined, field = 'tags'): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const raw of tags ?? []) {
    const t = String(raw).trim();
    if (!t) continue;
    if (t.length > MAX_TAG_LENGTH) throw invalid(field, TAG_TOO_LONG);
    const key = t.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(t);
  }
  if (out.length > MAX_TAGS) throw invalid(field, TOO_MANY_TAGS);
  return out;
}

/** Where a contact came from: a short slug (manual, chatnet, socialnet, api…), stored lower-cased. */
export const SOURCE_PATTERN = /^[a-z0-9_-]{1,40}$/;
export const SOURCE_MESSAGE = 'must be 1-40 lowercase letters, digits, - or _ (e.g. manual, chatnet, socialnet)';

/** The source as stored: trimmed, lower-cased, `fallback` when empty. */
export function contactSource(value: string | undefined, fallback: string): string {
  const v = (value ?? '').trim().toLowerCase() || fallback;
  if (!SOURCE_PATTERN.test(v)) throw invalid('source', SOURCE_MESSAGE);
  return v;
}

/** numeric(14,2): below 10^12, never negative, whole cents. */
export const MAX_DEAL_VALUE = 999_999_999_999.99;

/** The deal's value (0 when absent); a value with more than 2 decimals is refused, not rounded by the column. */
export function dealValue(value: number | undefined): number {
  const v = value ?? 0;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid('dealValue', 'must be a number');
  if (v < 0) throw invalid('dealValue', 'must not be negative');
  if (v > MAX_DEAL_VALUE) throw invalid('dealValue', `must be at most ${MAX_DEAL_VALUE}`);
  if (Number(v.toFixed(2)) !== v) throw invalid('dealValue', 'must have at most 2 decimals');
  return v;
}
