import { invalid } from '@crm/grpc-kit';

// The checks every service shares live in @crm/validation (escapeLike with the SQL helpers in @crm/db); this
// file keeps crm's own rules and passes the shared ones on to crm's modules.
export { escapeLike } from '@crm/db';
export { bulkIds, isoTimestamp, isUuid, oneOf, optionalEmail, optionalText, requireText, requireUuid } from '@crm/validation';

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
