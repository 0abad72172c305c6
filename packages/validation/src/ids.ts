import { isUuid } from '@crm/db';
import { invalid } from '@crm/grpc-kit';

/** Ids that are not UUIDs cannot exist; answering 404 early keeps malformed ids away from SQL casts. */
export { isUuid };

/** A required id: malformed is a 400 naming the field; the id comes back lower-cased. */
export function requireUuid(value: string | undefined, field: string): string {
  if (!isUuid(value)) throw invalid(field, 'must be an id (UUID)');
  return value.toLowerCase();
}

/**
 * A bulk request's ids, deduplicated (UUIDs compared in lower case), and the malformed ones, which fail as
 * `not_found` like another org's: a bulk request never tells which ids exist elsewhere.
 */
export function bulkIds(ids: string[] | undefined, max: number): { valid: string[]; malformed: string[] } {
  const list = ids ?? [];
  if (list.length === 0) throw invalid('ids', 'must list at least one id');
  const valid = new Set<string>();
  const malformed = new Set<string>();
  for (const raw of list) {
    const id = String(raw).trim();
    if (isUuid(id)) valid.add(id.toLowerCase());
    else malformed.add(id);
  }
  if (valid.size + malformed.size > max) throw invalid('ids', `must list at most ${max} ids`);
  return { valid: [...valid], malformed: [...malformed] };
}
