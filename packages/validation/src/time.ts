import { invalid } from '@crm/grpc-kit';

/** An ISO 8601 date or timestamp PostgreSQL can store and read back. */
export function isoTimestamp(value: string | undefined, field: string): Date {
  const d = new Date(value ?? '');
  // Years 1-9999 only: PostgreSQL has no year 0 and cannot read an expanded (+010000) year back.
  const year = d.getUTCFullYear();
  if (!value || Number.isNaN(d.getTime()) || year < 1 || year > 9999)
    throw invalid(field, 'must be an ISO 8601 date or timestamp in years 0001-9999');
  return d;
}
