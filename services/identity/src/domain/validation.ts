import { invalid, isRole } from '@crm/grpc-kit';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normaliseEmail(email: string, field = 'email'): string {
  const e = (email ?? '').trim().toLowerCase();
  if (!EMAIL.test(e) || e.length > 254) throw invalid(field, 'must be a valid email address');
  return e;
}

/** PostgreSQL refuses NUL in text; a caller that sends one (the gateway refuses it, another service might not) gets a 400. */
export function rejectNul(value: string | undefined, field: string): void {
  if (value?.includes('\u0000')) throw invalid(field, 'must not contain NUL characters');
}

export function requireText(value: string | undefined, field: string, max = 200): string {
  rejectNul(value, field);
  const v = (value ?? '').trim();
  if (!v) throw invalid(field, 'is required');
  if (v.length > max) throw invalid(field, `must be at most ${max} characters`);
  return v;
}

export function optionalText(value: string | undefined, field: string, max = 200): string {
  rejectNul(value, field);
  const v = (value ?? '').trim();
  if (v.length > max) throw invalid(field, `must be at most ${max} characters`);
  return v;
}

export function requireRole(role: string | undefined, field = 'role'): string {
  if (!role || !isRole(role)) throw invalid(field, 'must be one of owner, admin, team_lead, agent');
  return role;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Ids that are not UUIDs cannot exist; answering 404 early keeps malformed ids away from SQL casts. */
export function isUuid(id: string | undefined): id is string {
  return !!id && UUID.test(id);
}
