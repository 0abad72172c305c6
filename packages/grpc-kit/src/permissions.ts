import { AppError } from './errors';

/** Roles from least to most powerful; each role has every permission of the roles before it. */
export const ROLES = ['agent', 'team_lead', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

export type Permission =
  | 'contacts:write'
  | 'contacts:delete'
  | 'contacts:import'
  | 'contacts:export'
  | 'conversations:write'
  | 'automation:manage'
  | 'campaigns:manage'
  | 'analytics:view'
  | 'teams:manage'
  | 'users:manage'
  | 'settings:edit'
  | 'audit:view'
  | 'sandbox:control';

/** The least role that holds each permission. */
const LEAST_ROLE: Record<Permission, Role> = {
  'contacts:write': 'agent',
  // Deleting loses history for the whole team: team leads and above (issue #12).
  'contacts:delete': 'team_lead',
  // A CSV import writes up to 50,000 contacts at once (issue #15): team leads and above.
  'contacts:import': 'team_lead',
  // A CSV export takes the whole customer base out of the product at once (issue #27): team leads and above.
  'contacts:export': 'team_lead',
  'conversations:write': 'agent',
  'automation:manage': 'team_lead',
  'campaigns:manage': 'team_lead',
  'analytics:view': 'team_lead',
  'teams:manage': 'admin',
  'users:manage': 'admin',
  'settings:edit': 'admin',
  'audit:view': 'admin',
  'sandbox:control': 'admin',
};

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export function roleRank(role: string): number {
  return ROLES.indexOf(role as Role);
}

export function can(role: string, permission: Permission): boolean {
  const rank = roleRank(role);
  return rank >= 0 && rank >= roleRank(LEAST_ROLE[permission]);
}

export function requirePermission(role: string, permission: Permission): void {
  if (!can(role, permission)) {
    throw new AppError('permission_denied', `This action needs permission ${permission}`, { code: 'forbidden' });
  }
}
