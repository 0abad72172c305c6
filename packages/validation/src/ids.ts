import { invalid } from '@crm/grpc-kit';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids that are not UUIDs cannot exist; answering 404 early keeps malformed ids away from SQL casts. */
export function isUuid(id: string | undefined | null): id is string {
  return !!id && UUID.test(id);
}

/** A required id: malformed is a 400 naming the field; the id comes back lower-cased. */
export function requireUuid(value: string | undefined, field: string): string {
  if (!isUuid(value)) throw invalid(field, 'must be an id (UUID)');
  return value.toLowerCase();
}
