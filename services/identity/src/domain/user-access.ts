import { AppError, forbidden, requirePermission, roleRank } from '@crm/grpc-kit';

// Who may change whom. The role hierarchy and the least role of each permission are grpc-kit's (agent < team_lead <
// admin < owner); the rules here are identity's own: what a user may do to their own account, to a user ranked
// above them, and to the organization's last owner.

/** The signed-in user acting (requireUser's answer). */
interface Actor {
  userId: string;
  role: string;
}

/** Nobody grants a role above their own, nor changes a user whose role is above their own. */
export function assertMayGrant(actorRole: string, role: string): void {
  if (roleRank(role) > roleRank(actorRole)) throw forbidden(`Only an ${role} can give the ${role} role`);
}

/** Users may edit their own name and contact details; anything else, or anyone else, needs users:manage. */
export function requireMayEdit(actor: Actor, targetId: string, changesAccess: boolean): void {
  if (targetId !== actor.userId || changesAccess) requirePermission(actor.role, 'users:manage');
}

/** A change of role or status: never one's own, never of a user ranked above, never to a role above one's own. */
export function requireMayChangeAccess(actor: Actor, target: { id: string; role: string }, newRole: string | undefined): void {
  if (target.id === actor.userId) throw forbidden('You cannot change your own role or status');
  assertMayGrant(actor.role, target.role);
  if (newRole) assertMayGrant(actor.role, newRole);
}

/** Deactivation: never oneself, never a user ranked above. */
export function requireMayDeactivate(actor: Actor, target: { id: string; role: string }): void {
  if (target.id === actor.userId) throw forbidden('You cannot deactivate yourself');
  assertMayGrant(actor.role, target.role);
}

/**
 * Whether an update takes the owner role or the active status from an owner, so the organization's active owners
 * must be counted before it is allowed.
 */
export function demotesOwner(target: { role: string; status: string }, patch: { role?: string; status?: string }): boolean {
  // An inactive owner is no active owner to lose: changing its role must not count against the last active one.
  return isActiveOwner(target) && ((Boolean(patch.role) && patch.role !== 'owner') || patch.status === 'inactive');
}

/** Deactivating this user takes an active owner away. */
export function isActiveOwner(user: { role: string; status: string }): boolean {
  return user.role === 'owner' && user.status === 'active';
}

/** An organization keeps at least one active owner; `activeOwners` still counts the one about to go. */
export function assertKeepsAnOwner(activeOwners: number): void {
  if (activeOwners <= 1) {
    throw new AppError('failed_precondition', 'An organization must keep at least one active owner', { code: 'last_owner' });
  }
}
