import { invalid, isRole } from '@crm/grpc-kit';

// The checks every service shares (ids, text, email) live in @crm/validation; identity's own rules stay here.

export function requireRole(role: string | undefined, field = 'role'): string {
  if (!role || !isRole(role)) throw invalid(field, 'must be one of owner, admin, team_lead, agent');
  return role;
}
