import { Router } from 'express';
import { z } from 'zod';
import { MessageBody, page } from './common.schemas';
import { EDGE_REFUSALS } from '../docs/registry';
import { principalOf } from '../http/principal';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import { apiKeyArea, apiKeyRoutes } from './api-keys.routes';
import { auditLogRoutes } from './audit-log.routes';
import type { RouteDeps } from './deps';
import { apiKeyOut, createdUserOut, teamBriefOut, teamOut, userOut } from './identity.out';
import {
  Accept,
  ApiKeyInfo,
  AuthResult,
  Availability,
  AvailabilityChoice,
  AvailabilitySet,
  CreatedUser,
  GeneratedApiKey,
  Login,
  Logout,
  NewOrg,
  NewTeam,
  NewUser,
  NotificationPreferences,
  NotificationPreferencesOut,
  NotificationPreferencesSet,
  Refresh,
  SetupStatus,
  Team,
  TeamBrief,
  TeamPatch,
  User,
  UserPatch,
  UserQuery,
} from './identity.schemas';

const identity = (deps: RouteDeps) => deps.clients.identity;

/**
 * Setup, sign-in, profile, users, teams and the API key: everything identity owns. Mounted before the app's bearer
 * check (the sign-in routes take none, behind the per-IP limit instead), so the other routes check the bearer themselves.
 * Served and documented from these declarations.
 */
const signIn = routeArea({ prefix: '/api/v1', auth: 'none', tag: 'Sign-in' });
const me = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Profile', middleware: (deps) => [deps.auth.bearer] });
const users = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Users and teams', middleware: (deps) => [deps.auth.bearer] });
const keys = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'API key', middleware: (deps) => [deps.auth.bearer] });
const limited = (deps: RouteDeps) => [deps.authLimit];

// First run and sign-in: no bearer token yet.
signIn.route('GET /setup/status', {
  summary: 'Whether the first organization still has to be set up',
  response: SetupStatus,
  errors: EDGE_REFUSALS,
  handler: async ({ ctx, deps }) => {
    // Only whether setup is still needed: how many organizations a deployment hosts is nobody's business here.
    const out = await identity(deps).GetSetupStatus({}, ctx);
    return { setupRequired: out.setupRequired };
  },
});
signIn.route('POST /setup', {
  summary: 'First run: create the first organization and its owner',
  middleware: limited,
  body: NewOrg,
  status: 201,
  response: AuthResult,
  errors: [409, 429],
  handler: async ({ body, ctx, deps }) => identity(deps).Setup(body, ctx),
});
signIn.route('POST /auth/signup', {
  summary: 'Create an organization and its owner (when SIGNUP_ENABLED)',
  middleware: limited,
  body: NewOrg,
  status: 201,
  response: AuthResult,
  errors: [403, 409, 429],
  handler: async ({ body, ctx, deps }) => identity(deps).Signup(body, ctx),
});
signIn.route('POST /auth/login', {
  summary: 'Sign in: an access token (JWT) and a refresh token',
  middleware: limited,
  body: Login,
  response: AuthResult,
  errors: [401, 429],
  handler: async ({ body, ctx, deps }) => identity(deps).Login(body, ctx),
});
signIn.route('POST /auth/refresh', {
  summary: 'A new access token for a refresh token (the refresh token rotates)',
  middleware: limited,
  body: Refresh,
  response: AuthResult,
  errors: [401, 429],
  handler: async ({ body, ctx, deps }) => identity(deps).Refresh(body, ctx),
});
signIn.route('POST /auth/invitations/accept', {
  summary: 'Accept an invitation: set a password and sign in',
  middleware: limited,
  body: Accept,
  response: AuthResult,
  errors: [404, 429],
  handler: async ({ body, ctx, deps }) => identity(deps).AcceptInvitation(body, ctx),
});

// Everything below needs a signed-in user.
me.route('POST /auth/logout', {
  summary: 'Sign out: revoke this access token and the refresh token sent',
  body: Logout,
  response: MessageBody,
  handler: async ({ res, body: { refreshToken }, ctx, deps }) => {
    const p = principalOf(res);
    const out = await identity(deps).Logout({ refreshToken: refreshToken ?? '', jti: p.jti, accessExpiresAt: p.exp }, ctx);
    return { message: out.message };
  },
});
me.route('GET /profile', {
  summary: 'The signed-in user',
  response: User,
  handler: async ({ ctx, deps }) => userOut(await identity(deps).GetProfile({}, ctx)),
});
// The signed-in user's own preferences; there is no route to read or set another user's.
me.route('GET /profile/notifications', {
  summary: 'The signed-in user’s notification preferences',
  response: NotificationPreferencesOut,
  handler: async ({ ctx, deps }) => identity(deps).GetNotificationPreferences({}, ctx),
});
// The signed-in user's own availability: what they chose and what others see (offline with no socket for a while).
me.route('GET /profile/availability', {
  summary: 'The signed-in user’s availability: status (effective: offline also after a while with no socket connected), chosenStatus, connected',
  response: Availability,
  handler: async ({ ctx, deps }) => identity(deps).GetAvailability({}, ctx),
});
me.route('PUT /profile/availability', {
  summary: 'Set the signed-in user’s availability (effective while a socket of theirs is connected, or was a short while ago)',
  body: AvailabilityChoice,
  response: AvailabilitySet,
  handler: async ({ body, ctx, deps }) => identity(deps).SetAvailability(body, ctx),
});
me.route('PUT /profile/notifications', {
  summary: 'Set the signed-in user’s notification preferences',
  body: NotificationPreferences,
  response: NotificationPreferencesSet,
  handler: async ({ body, ctx, deps }) => identity(deps).SetNotificationPreferences(body, ctx),
});

users.route('GET /users', {
  summary: 'Users of the organization',
  query: UserQuery,
  paging: { limit: 50, max: 100 },
  response: page(User),
  handler: async ({ query, page, ctx, deps }) => {
    const out = await identity(deps).ListUsers({ ...page, ...query }, ctx);
    return { data: out.data.map(userOut), pagination: out.pagination! };
  },
});
users.route('POST /users', {
  summary: 'Invite a user (admins and owners)',
  body: NewUser,
  status: 201,
  response: CreatedUser,
  errors: [409],
  handler: async ({ body, ctx, deps }) => createdUserOut(await identity(deps).CreateUser(body, ctx)),
});
users.route('GET /users/:id', {
  summary: 'One user of the organization',
  response: User,
  handler: async ({ param, ctx, deps }) => userOut(await identity(deps).GetUser({ id: param('id') }, ctx)),
});
users.route('PUT /users/:id', {
  summary: 'Change a user (name, role, status…); only the fields sent change',
  body: UserPatch,
  response: User,
  errors: [422],
  handler: async ({ param, body, ctx, deps }) => userOut(await identity(deps).UpdateUser({ id: param('id'), ...body }, ctx)),
});
users.route('DELETE /users/:id', {
  summary: 'Deactivate a user (the organization keeps at least one active owner)',
  status: 204,
  response: null,
  errors: [422],
  handler: async ({ param, ctx, deps }) => {
    await identity(deps).DeactivateUser({ id: param('id') }, ctx);
  },
});
users.route('GET /teams', {
  summary: 'Teams of the organization (without member ids)',
  response: z.array(TeamBrief),
  handler: async ({ ctx, deps }) => (await identity(deps).ListTeams({}, ctx)).data.map(teamBriefOut),
});
users.route('POST /teams', {
  summary: 'Create a team',
  body: NewTeam,
  status: 201,
  response: Team,
  errors: [409],
  handler: async ({ body, ctx, deps }) => teamOut(await identity(deps).CreateTeam({ ...body, setMembers: true }, ctx)),
});
users.route('GET /teams/:id', {
  summary: 'One team with its member ids',
  response: Team,
  handler: async ({ param, ctx, deps }) => teamOut(await identity(deps).GetTeam({ id: param('id') }, ctx)),
});
users.route('PUT /teams/:id', {
  summary: 'Change a team; memberIds, when sent, replaces the members',
  body: TeamPatch,
  response: Team,
  errors: [409],
  handler: async ({ param, body: patch, ctx, deps }) =>
    teamOut(
      await identity(deps).UpdateTeam(
        { id: param('id'), ...patch, memberIds: patch.memberIds ?? [], setMembers: patch.memberIds !== undefined },
        ctx,
      ),
    ),
});
users.route('DELETE /teams/:id', {
  summary: 'Delete a team',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await identity(deps).DeleteTeam({ id: param('id') }, ctx);
  },
});

keys.route('GET /settings/api-key', {
  summary: 'Whether the organization has an API key, and its mask',
  response: ApiKeyInfo,
  handler: async ({ ctx, deps }) => apiKeyOut(await identity(deps).GetApiKey({}, ctx)),
});
keys.route('POST /settings/api-key/generate', {
  summary: 'Generate a new API key (the old one stops working); the key is shown once',
  status: 201,
  response: GeneratedApiKey,
  handler: async ({ ctx, deps }) => identity(deps).GenerateApiKey({}, ctx),
});

/** Identity's operations, in the document's order (the named API keys after the organization's key). */
export const identityOps = [...signIn.ops, ...me.ops, ...users.ops, ...keys.ops, ...apiKeyArea.ops];

export function identityRoutes(deps: RouteDeps): Router {
  const contract = responseContract(deps.config);
  const r = Router();
  for (const area of [signIn, me, users, keys]) r.use(area.router(deps, contract));
  r.use(apiKeyRoutes(deps));
  r.use(auditLogRoutes(deps));
  return r;
}
