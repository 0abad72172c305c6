import { invalid } from '@crm/grpc-kit';

/** One of the allowed values, required. */
export function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], field: string): T {
  if (!value || !(allowed as readonly string[]).includes(value)) throw invalid(field, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** One of the allowed values, or undefined when absent or empty (proto3 sends an unset string as ''). */
export function optionalOneOf<T extends string>(value: string | undefined, allowed: readonly T[], field: string): T | undefined {
  if (value === undefined || value === '') return undefined;
  return oneOf(value, allowed, field);
}
