import { invalid } from '@crm/grpc-kit';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Ids that are not UUIDs cannot exist; answering 404 early keeps malformed ids away from SQL casts. */
export function isUuid(id: string | undefined | null): id is string {
  return !!id && UUID.test(id);
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

export function oneOf<T extends string>(value: string | undefined, field: string, allowed: readonly T[]): T | undefined {
  if (value === undefined || value === '') return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw invalid(field, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

const HEX = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
export function hexColor(value: string | undefined, field = 'color'): string {
  const v = (value ?? '').trim();
  if (!HEX.test(v)) throw invalid(field, 'must be a hex color such as #3B82F6');
  return v.toUpperCase();
}

/** Longest message body accepted (the chat network's own limit is in the same range). */
export const MAX_CONTENT = 20_000;
