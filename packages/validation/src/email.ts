import { invalid } from '@crm/grpc-kit';

/** Loose on purpose (local part, @, a dotted domain): mail delivery is the real check. */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const EMAIL_MAX = 254;
export const EMAIL_MESSAGE = 'must be a valid email address';

/** A required email address, trimmed and lower-cased. */
export function normaliseEmail(value: string | undefined, field = 'email'): string {
  const e = (value ?? '').trim().toLowerCase();
  if (!EMAIL_PATTERN.test(e) || e.length > EMAIL_MAX) throw invalid(field, EMAIL_MESSAGE);
  return e;
}

/** Empty is allowed (contacts often have no email); anything else must look like an address. */
export function optionalEmail(value: string | undefined, field = 'email'): string {
  return (value ?? '').trim() ? normaliseEmail(value, field) : '';
}
