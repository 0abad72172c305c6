import { invalid } from '@crm/grpc-kit';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Ids that are not UUIDs cannot exist; answering 404 early keeps malformed ids away from SQL casts. */
export function isUuid(id: string | undefined | null): id is string {
  return !!id && UUID.test(id);
}

export function requireUuid(value: string | undefined, field: string): string {
  if (!isUuid(value)) throw invalid(field, 'must be an id (UUID)');
  return value.toLowerCase();
}

export function requireText(value: string | undefined, field: string, max = 200): string {
  const v = (value ?? '').trim();
  if (!v) throw invalid(field, 'is required');
  if (v.length > max) throw invalid(field, `must be at most ${max} characters`);
  return v;
}

export function optionalText(value: string | undefined, field: string, max = 200): string {
  const v = (value ?? '').trim();
  if (v.length > max) throw invalid(field, `must be at most ${max} characters`);
  return v;
}

export function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], field: string): T {
  if (!value || !(allowed as readonly string[]).includes(value)) throw invalid(field, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** Empty is allowed (contacts often have no email); anything else must look like an address. */
export function optionalEmail(value: string | undefined, field = 'email'): string {
  const e = (value ?? '').trim().toLowerCase();
  if (!e) return '';
  if (!EMAIL.test(e) || e.length > 254) throw invalid(field, 'must be a valid email address');
  return e;
}

export function isoTimestamp(value: string | undefined, field: string): Date {
  const d = new Date(value ?? '');
  // Years 1-9999 only: PostgreSQL has no year 0 and cannot read an expanded (+010000) year back.
  const year = d.getUTCFullYear();
  if (!value || Number.isNaN(d.getTime()) || year < 1 || year > 9999) throw invalid(field, 'must be an ISO 8601 date or timestamp in years 0001-9999');
  return d;
}

export const MAX_TAGS = 50;
export const MAX_TAG_LENGTH = 50;

/** Trimmed, de-duplicated (first spelling wins), no empties. */
export function normaliseTags(tags: string[] | undefined, field = 'tags'): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const raw of tags ?? []) {
    const t = String(raw).trim();
    if (!t) continue;
    if (t.length > MAX_TAG_LENGTH) throw invalid(field, `each tag must be at most ${MAX_TAG_LENGTH} characters`);
    const key = t.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(t);
  }
  if (out.length > MAX_TAGS) throw invalid(field, `must have at most ${MAX_TAGS} tags`);
  return out;
}

/** Escape LIKE wildcards so a search for "50%" finds the text "50%". */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}
