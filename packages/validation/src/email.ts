import { invalid } from '@crm/grpc-kit';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A required email address, trimmed and lower-cased. */
export function normaliseEmail(value: string | undefined, field = 'email'): string {
  const e = (value ?? '').trim().toLowerCase();
  if (!EMAIL.test(e) || e.length > 254) throw invalid(field, 'must be a valid email address');
  return e;
}

/** Empty is allowed (contacts often have no email); anything else must look like an address. */
export function optionalEmail(value: string | undefined, field = 'email'): string {
  return (value ?? '').trim() ? normaliseEmail(value, field) : '';
}
