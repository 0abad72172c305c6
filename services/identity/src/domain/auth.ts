import { randomUUID } from 'node:crypto';
import { AppError, CallContext } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import type { Deps } from '../deps';
import * as orgs from '../db/orgs.repo';
import * as tokens from '../db/tokens.repo';
import * as users from '../db/users.repo';
import { invitationInvalid, isAcceptable } from './invitations';
import { checkPasswordStrength, hashPassword, verifyPassword } from './passwords';
import { secretTokenHash } from './secret-tokens';
import { issueSession } from './sessions';
import { normaliseEmail, requireText } from '@crm/validation';

interface NewOrg {
  orgName: string;
  fullName: string;
  email: string;
  password: string;
}

export async function setupStatus(deps: Deps) {
  const count = await orgs.countOrganizations(deps.pool);
  return { setupRequired: count === 0, organizationCount: count };
}

function validateNewOrg(req: NewOrg): NewOrg {
  const orgName = requireText(req.orgName, 'orgName');
  const fullName = requireText(req.fullName, 'fullName');
  const email = normaliseEmail(req.email);
  checkPasswordStrength(req.password);
  return { orgName, fullName, email, password: req.password };
}

/** Create an organization with its owner and sign the owner in. `firstRunOnly`: setup's rule. */
async function createOrganization(deps: Deps, input: NewOrg, firstRunOnly: boolean) {
  const req = validateNewOrg(input);
  const passwordHash = await hashPassword(req.password);
  return withTransaction(deps.pool, async (db) => {
    if (firstRunOnly) {
      await orgs.lockSetup(db);
      if ((await orgs.countOrganizations(db)) > 0) {
        throw new AppError('already_exists', 'Setup is already complete', { code: 'setup_complete' });
      }
    }
    if (await users.findByEmail(db, req.email)) {
      throw new AppError('already_exists', 'A user with this email already exists', { code: 'email_taken' });
    }
    const orgId = randomUUID();
    await orgs.insertOrganization(db, orgId, req.orgName);
    const owner = await users.insertUser(db, { id: randomUUID(), orgId, email: req.email, passwordHash, fullName: req.fullName, role: 'owner' });
    await users.touchLastLogin(db, owner.id);
    return issueSession(deps, db, owner);
  });
}

export function setup(deps: Deps, req: NewOrg) {
  return createOrganization(deps, req, true);
}

export function signup(deps: Deps, req: NewOrg) {
  if (!deps.config.SIGNUP_ENABLED) {
    throw new AppError('permission_denied', 'Sign-up of new organizations is disabled on this server', { code: 'signup_disabled' });
  }
  return createOrganization(deps, req, false);
}

const badCredentials = () => new AppError('unauthenticated', 'Invalid email or password', { code: 'invalid_credentials' });

/** One generic 401 for unknown email, wrong password, no password yet or an inactive account. */
export async function login(deps: Deps, req: { email: string; password: string }, ctx: CallContext) {
  const email = (req.email ?? '').trim().toLowerCase();
  const ip = ctx.clientIp || 'unknown';
  await deps.throttle.assertAllowed(email, ip);
  const user = email ? await users.findByEmail(deps.pool, email) : undefined;
  const ok = (await verifyPassword(user?.password_hash, req.password ?? '')) && user?.status === 'active';
  if (!ok || !user) {
    await deps.throttle.recordFailure(email, ip);
    throw badCredentials();
  }
  await deps.throttle.recordSuccess(email, ip);
  await users.touchLastLogin(deps.pool, user.id);
  return issueSession(deps, deps.pool, user);
}

/** An invited user sets a password with the single-use token from the invitation link. */
export async function acceptInvitation(deps: Deps, req: { token: string; password: string }) {
  checkPasswordStrength(req.password);
  const passwordHash = await hashPassword(req.password);
  return withTransaction(deps.pool, async (db) => {
    const inv = req.token ? await tokens.findInvitationForUpdate(db, secretTokenHash(req.token)) : undefined;
    if (!isAcceptable(inv, Date.now())) throw invitationInvalid();
    const user = await users.updateUser(db, inv.org_id, inv.user_id, { passwordHash });
    if (!user || user.status !== 'active') throw invitationInvalid();
    await tokens.markInvitationUsed(db, inv.id);
    await users.touchLastLogin(db, user.id);
    return issueSession(deps, db, user);
  });
}
