import { AppError } from '@crm/grpc-kit';
import {
  assertKeepsAnOwner,
  assertMayGrant,
  demotesOwner,
  isActiveOwner,
  requireMayChangeAccess,
  requireMayDeactivate,
  requireMayEdit,
} from './user-access';

// Who may change whom inside an organization: the rules PUT and DELETE /users/:id and POST /users apply before
// touching the database.

/** What a rule answered: 'ok', or the refusal's kind and code. */
function outcome(rule: () => void): string {
  try {
    rule();
    return 'ok';
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return err.code === err.kind ? err.kind : `${err.kind}:${err.code}`;
  }
}

const ROLES_LOW_TO_HIGH = ['agent', 'team_lead', 'admin', 'owner'];

describe('assertMayGrant: the role hierarchy', () => {
  it('each role may give its own role and every role below it, and none above', () => {
    const grantable = (actor: string) => ROLES_LOW_TO_HIGH.filter((role) => outcome(() => assertMayGrant(actor, role)) === 'ok');
    expect(grantable('agent')).toEqual(['agent']);
    expect(grantable('team_lead')).toEqual(['agent', 'team_lead']);
    expect(grantable('admin')).toEqual(['agent', 'team_lead', 'admin']);
    expect(grantable('owner')).toEqual(ROLES_LOW_TO_HIGH);
  });

  it('the refusal is a 403 that names the role', () => {
    expect(outcome(() => assertMayGrant('admin', 'owner'))).toBe('permission_denied');
    expect(() => assertMayGrant('admin', 'owner')).toThrow('Only an owner can give the owner role');
  });

  it('an unknown actor role grants nothing a known role', () => {
    expect(outcome(() => assertMayGrant('superuser', 'agent'))).toBe('permission_denied');
  });
});

describe('requireMayEdit: own profile or users:manage', () => {
  const actor = (role: string) => ({ userId: 'me', role });

  it('anyone may edit their own name and contact details', () => {
    for (const role of ROLES_LOW_TO_HIGH) expect(outcome(() => requireMayEdit(actor(role), 'me', false))).toBe('ok');
  });

  it('editing another user needs users:manage: admins and owners, not team leads or agents', () => {
    const allowed = ROLES_LOW_TO_HIGH.filter((role) => outcome(() => requireMayEdit(actor(role), 'someone-else', false)) === 'ok');
    expect(allowed).toEqual(['admin', 'owner']);
    expect(outcome(() => requireMayEdit(actor('team_lead'), 'someone-else', false))).toBe('permission_denied:forbidden');
  });

  it('touching role or status needs users:manage even on oneself', () => {
    expect(outcome(() => requireMayEdit(actor('agent'), 'me', true))).toBe('permission_denied:forbidden');
    expect(outcome(() => requireMayEdit(actor('admin'), 'me', true))).toBe('ok');
  });
});

describe('requireMayChangeAccess: role and status changes', () => {
  const admin = { userId: 'a1', role: 'admin' };
  const owner = { userId: 'o1', role: 'owner' };

  it('nobody changes their own role or status, not even an owner', () => {
    expect(outcome(() => requireMayChangeAccess(owner, { id: 'o1', role: 'owner' }, 'admin'))).toBe('permission_denied');
    expect(outcome(() => requireMayChangeAccess(owner, { id: 'o1', role: 'owner' }, undefined))).toBe('permission_denied');
  });

  it('an admin may not touch an owner, even to leave the role as it is (a status change)', () => {
    expect(outcome(() => requireMayChangeAccess(admin, { id: 'o1', role: 'owner' }, undefined))).toBe('permission_denied');
    expect(outcome(() => requireMayChangeAccess(admin, { id: 'o1', role: 'owner' }, 'agent'))).toBe('permission_denied');
  });

  it('an admin may move an agent up to admin but not to owner', () => {
    expect(outcome(() => requireMayChangeAccess(admin, { id: 'u1', role: 'agent' }, 'admin'))).toBe('ok');
    expect(outcome(() => requireMayChangeAccess(admin, { id: 'u1', role: 'agent' }, 'owner'))).toBe('permission_denied');
  });

  it('an owner may make another user an owner, or demote another owner', () => {
    expect(outcome(() => requireMayChangeAccess(owner, { id: 'u1', role: 'admin' }, 'owner'))).toBe('ok');
    expect(outcome(() => requireMayChangeAccess(owner, { id: 'o2', role: 'owner' }, 'agent'))).toBe('ok');
  });
});

describe('requireMayDeactivate', () => {
  it('nobody deactivates themselves', () => {
    expect(outcome(() => requireMayDeactivate({ userId: 'o1', role: 'owner' }, { id: 'o1', role: 'owner' }))).toBe('permission_denied');
  });

  it('an admin deactivates admins and below, not owners; an owner deactivates another owner', () => {
    const admin = { userId: 'a1', role: 'admin' };
    expect(outcome(() => requireMayDeactivate(admin, { id: 'a2', role: 'admin' }))).toBe('ok');
    expect(outcome(() => requireMayDeactivate(admin, { id: 'u1', role: 'agent' }))).toBe('ok');
    expect(outcome(() => requireMayDeactivate(admin, { id: 'o1', role: 'owner' }))).toBe('permission_denied');
    expect(outcome(() => requireMayDeactivate({ userId: 'o1', role: 'owner' }, { id: 'o2', role: 'owner' }))).toBe('ok');
  });
});

describe('the last active owner', () => {
  it('an update demotes an owner when it gives another role or deactivates', () => {
    expect(demotesOwner({ role: 'owner', status: 'active' }, { role: 'admin' })).toBe(true);
    expect(demotesOwner({ role: 'owner', status: 'active' }, { status: 'inactive' })).toBe(true);
    expect(demotesOwner({ role: 'owner', status: 'active' }, { role: 'owner', status: 'inactive' })).toBe(true);
  });

  it('keeping the owner role, reactivating, or a profile edit demotes nobody; nor does any change to a non-owner', () => {
    expect(demotesOwner({ role: 'owner', status: 'active' }, { role: 'owner' })).toBe(false);
    expect(demotesOwner({ role: 'owner', status: 'active' }, { status: 'active' })).toBe(false);
    expect(demotesOwner({ role: 'owner', status: 'active' }, {})).toBe(false);
    expect(demotesOwner({ role: 'admin', status: 'active' }, { role: 'agent', status: 'inactive' })).toBe(false);
  });

  it('changing an inactive owner demotes no active owner (the last active one may stay alone)', () => {
    expect(demotesOwner({ role: 'owner', status: 'inactive' }, { role: 'agent' })).toBe(false);
    expect(demotesOwner({ role: 'owner', status: 'inactive' }, { status: 'inactive' })).toBe(false);
  });

  it('deactivating takes an owner away only from an active owner', () => {
    expect(isActiveOwner({ role: 'owner', status: 'active' })).toBe(true);
    expect(isActiveOwner({ role: 'owner', status: 'inactive' })).toBe(false);
    expect(isActiveOwner({ role: 'admin', status: 'active' })).toBe(false);
  });

  it('the change is refused (last_owner) while the one going is the only active owner', () => {
    expect(outcome(() => assertKeepsAnOwner(1))).toBe('failed_precondition:last_owner');
    expect(outcome(() => assertKeepsAnOwner(0))).toBe('failed_precondition:last_owner');
    expect(outcome(() => assertKeepsAnOwner(2))).toBe('ok');
  });
});
