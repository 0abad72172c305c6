import { z } from 'zod';
import { API_KEY_SCOPES } from '@crm/auth';
import {
  Accept,
  AvailabilityChoice,
  Login,
  Logout,
  NewOrg,
  NewTeam,
  NewUser,
  NotificationPreferences,
  Refresh,
  TeamPatch,
  UserPatch,
  UserQuery,
} from '../../routes/identity.routes';
import { ApiSettings, NewApiKey } from '../../routes/api-keys.routes';
import type { apiKeyOut, namedApiKeyOut } from '../../routes/identity.out';
import { nulls, reply } from '../proto-schema';
import { area, EDGE_REFUSALS } from '../registry';
import { keysMatch } from '../schemas/check';
import { MessageBody, page } from '../schemas/common';

/** Setup, sign-in, profile, users, teams, the API key and the audit log (identity). */
const signIn = area({ prefix: '/api/v1', auth: 'none', tag: 'Sign-in' });
const AuthResult = reply('identity', 'Login');
signIn.op('GET /setup/status', {
  summary: 'Whether the first organization still has to be set up',
  responses: { 200: z.object({ setupRequired: z.boolean() }) },
  errors: EDGE_REFUSALS,
});
signIn.op('POST /setup', {
  summary: 'First run: create the first organization and its owner',
  body: NewOrg,
  responses: { 201: AuthResult },
  errors: [409, 429],
});
signIn.op('POST /auth/signup', {
  summary: 'Create an organization and its owner (when SIGNUP_ENABLED)',
  body: NewOrg,
  responses: { 201: AuthResult },
  errors: [403, 409, 429],
});
signIn.op('POST /auth/login', {
  summary: 'Sign in: an access token (JWT) and a refresh token',
  body: Login,
  responses: { 200: AuthResult },
  errors: [401, 429],
});
signIn.op('POST /auth/refresh', {
  summary: 'A new access token for a refresh token (the refresh token rotates)',
  body: Refresh,
  responses: { 200: AuthResult },
  errors: [401, 429],
});
signIn.op('POST /auth/invitations/accept', {
  summary: 'Accept an invitation: set a password and sign in',
  body: Accept,
  responses: { 200: AuthResult },
  errors: [404, 429],
});

/** identity.out userOut: unset department, phone, avatar and lastLogin (never signed in) are null. */
const User = nulls(reply('identity', 'GetProfile'), ['department', 'phone', 'avatar', 'lastLogin']);
/** identity.out teamOut: no description is null. */
const Team = nulls(reply('identity', 'GetTeam'), ['description']);

const me = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Profile' });
me.op('POST /auth/logout', {
  summary: 'Sign out: revoke this access token and the refresh token sent',
  body: Logout,
  responses: { 200: MessageBody },
});
me.op('GET /profile', { summary: 'The signed-in user', responses: { 200: User } });
me.op('GET /profile/notifications', {
  summary: 'The signed-in user’s notification preferences',
  responses: { 200: reply('identity', 'GetNotificationPreferences') },
});
me.op('GET /profile/availability', {
  summary: 'The signed-in user’s availability: status (effective: offline also after a while with no socket connected), chosenStatus, connected',
  responses: { 200: reply('identity', 'GetAvailability') },
});
me.op('PUT /profile/availability', {
  summary: 'Set the signed-in user’s availability (effective while a socket of theirs is connected, or was a short while ago)',
  body: AvailabilityChoice,
  responses: { 200: reply('identity', 'SetAvailability') },
});
me.op('PUT /profile/notifications', {
  summary: 'Set the signed-in user’s notification preferences',
  body: NotificationPreferences,
  responses: { 200: reply('identity', 'SetNotificationPreferences') },
});

const users = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Users and teams' });
users.op('GET /users', { summary: 'Users of the organization', query: UserQuery, paging: { limit: 50, max: 100 }, responses: { 200: page(User) } });
users.op('POST /users', {
  summary: 'Invite a user (admins and owners)',
  body: NewUser,
  responses: { 201: nulls(reply('identity', 'CreateUser'), ['lastLogin', 'inviteUrl']) },
  errors: [409],
});
users.op('GET /users/:id', { summary: 'One user of the organization', responses: { 200: User } });
users.op('PUT /users/:id', {
  summary: 'Change a user (name, role, status…); only the fields sent change',
  body: UserPatch,
  responses: { 200: User },
  errors: [422],
});
users.op('DELETE /users/:id', {
  summary: 'Deactivate a user (the organization keeps at least one active owner)',
  responses: { 204: null },
  errors: [422],
});
users.op('GET /teams', { summary: 'Teams of the organization (without member ids)', responses: { 200: z.array(Team.omit({ memberIds: true })) } });
users.op('POST /teams', { summary: 'Create a team', body: NewTeam, responses: { 201: Team }, errors: [409] });
users.op('GET /teams/:id', { summary: 'One team with its member ids', responses: { 200: Team } });
users.op('PUT /teams/:id', {
  summary: 'Change a team; memberIds, when sent, replaces the members',
  body: TeamPatch,
  responses: { 200: Team },
  errors: [409],
});
users.op('DELETE /teams/:id', { summary: 'Delete a team', responses: { 204: null } });

/** identity.out apiKeyOut: the mask only, never the key. */
const ApiKeyInfo = z.object({ hasKey: z.boolean(), keyMask: z.string(), createdAt: z.string().nullable() });
keysMatch<z.infer<typeof ApiKeyInfo>, ReturnType<typeof apiKeyOut>>(true);
const keys = area({ prefix: '/api/v1', auth: 'bearer', tag: 'API key' });
keys.op('GET /settings/api-key', { summary: 'Whether the organization has an API key, and its mask', responses: { 200: ApiKeyInfo } });
keys.op('POST /settings/api-key/generate', {
  summary: 'Generate a new API key (the old one stops working); the key is shown once',
  responses: { 201: reply('identity', 'GenerateApiKey') },
});

/** identity.out namedApiKeyOut: never the key, except in the creation answer. */
const NamedApiKey = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(z.enum(API_KEY_SCOPES)),
  userId: z.string().nullable().describe('the user the key acts as (their role and visibility); null: the whole organization'),
  prefix: z.string().describe('how the key is shown after creation: crm_live_••••abcd'),
  key: z.string().optional().describe('the key itself: only in the answer to POST, shown once'),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  lastUsedAt: z.string().nullable().describe('updated at most once a minute'),
});
keysMatch<z.infer<typeof NamedApiKey>, ReturnType<typeof namedApiKeyOut>>(true);
keys.op('POST /api-keys', {
  summary: 'Create a named API key with scopes, optionally bound to a user; the key is shown once',
  description:
    'Owners and admins create any key (bound to a user of a role no higher than their own); another user creates ' +
    'only keys bound to themselves, and only while PUT /settings/api has agentKeys on (else 403). 400 names the field.',
  body: NewApiKey,
  responses: { 201: NamedApiKey.required({ key: true }) },
});
keys.op('GET /api-keys', {
  summary: 'The named API keys (for an agent: those bound to them), newest first; never the key itself',
  paging: { limit: 20, max: 100 },
  responses: { 200: page(NamedApiKey.omit({ key: true })) },
});
keys.op('DELETE /api-keys/:id', {
  summary: 'Revoke a named API key: it stops working at once on every gateway',
  responses: { 204: null },
});
keys.op('GET /settings/api', { summary: 'The organization’s API settings', responses: { 200: ApiSettings } });
keys.op('PUT /settings/api', {
  summary: 'Let agents create API keys bound to themselves, or not (owners and admins)',
  body: ApiSettings,
  responses: { 200: ApiSettings },
});

export const identityOps = [...signIn.ops, ...me.ops, ...users.ops, ...keys.ops];
