import { identityRules } from '@crm/validation';

// The checks every service shares (ids, text, email) and identity's contract rules (roles, statuses, passwords,
// text limits, the audit-log action filter) live in @crm/validation, where the gateway's schemas take them from too.
export const rules = identityRules;

export function requireRole(role: string | undefined, field = 'role'): string {
  return identityRules.userRole(role, field);
}
