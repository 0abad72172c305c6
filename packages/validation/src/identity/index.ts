import { invalid } from '@crm/grpc-kit';
import { DEFAULT_TEXT_MAX } from '../text';

// identity's contract rules: the gateway's schemas are built from these, and identity applies the same ones to a
// caller that does not come through the gateway. Rules that need identity's data (a member id that must exist,
// the last active owner) stay in identity.

/** Highest first, as the API lists them. */
export const USER_ROLES = ['owner', 'admin', 'team_lead', 'agent'] as const;
export const ROLE_MESSAGE = `must be one of ${USER_ROLES.join(', ')}`;

export const USER_STATUSES = ['active', 'inactive'] as const;
export const STATUS_MESSAGE = `must be one of ${USER_STATUSES.join(', ')}`;

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;
export const PASSWORD_TOO_SHORT = `must be at least ${PASSWORD_MIN} characters`;
export const PASSWORD_TOO_LONG = `must be at most ${PASSWORD_MAX} characters`;

/** Most characters of each free-text field of a user, a team and an organization. */
export const IDENTITY_TEXT_MAX = {
  orgName: DEFAULT_TEXT_MAX,
  fullName: DEFAULT_TEXT_MAX,
  department: DEFAULT_TEXT_MAX,
  phone: 40,
  avatar: 2000,
  teamName: DEFAULT_TEXT_MAX,
  teamDescription: 1000,
} as const;

/** Most members one team write may name. */
export const MAX_TEAM_MEMBERS = 1000;

/** An audit-log action filter: an action (user.created) or a prefix ending in .* (user.*). */
export const AUDIT_ACTION_MAX = 100;
export const AUDIT_ACTION_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*(\.\*)?$/;
export const AUDIT_ACTION_MESSAGE = 'must be an action such as user.created, or a prefix ending in .* such as user.*';

export function userRole(value: string | undefined, field = 'role'): string {
  if (!value || !(USER_ROLES as readonly string[]).includes(value)) throw invalid(field, ROLE_MESSAGE);
  return value;
}

export function userStatus(value: string | undefined, field = 'status'): string {
  if (!value || !(USER_STATUSES as readonly string[]).includes(value)) throw invalid(field, STATUS_MESSAGE);
  return value;
}

export function checkPassword(value: unknown, field = 'password'): string {
  if (typeof value !== 'string' || value.length < PASSWORD_MIN) throw invalid(field, PASSWORD_TOO_SHORT);
  if (value.length > PASSWORD_MAX) throw invalid(field, PASSWORD_TOO_LONG);
  return value;
}

/** "" (no filter) or a valid action filter. */
export function auditActionFilter(value: string | undefined): string {
  const v = value ?? '';
  if (v && (v.length > AUDIT_ACTION_MAX || !AUDIT_ACTION_PATTERN.test(v))) throw invalid('action', AUDIT_ACTION_MESSAGE);
  return v;
}
