import { Router } from 'express';
import { z } from 'zod';
import { AVAILABILITY_STATUSES } from '@crm/events';
import { identityRules as rules } from '@crm/validation';
import { apiKeyRoutes } from './api-keys.routes';
import { auditLogRoutes } from './audit-log.routes';
import type { RouteDeps } from './deps';
import { apiKeyOut, createdUserOut, teamBriefOut, teamOut, userOut } from './identity.out';
import { ctxOf, principalOf } from '../http/principal';
import { body, pageParams, pathParam, query, s } from '../http/validate';

const MAX = rules.IDENTITY_TEXT_MAX;
const password = () =>
  z.string({ error: 'is required' }).min(rules.PASSWORD_MIN, rules.PASSWORD_TOO_SHORT).max(rules.PASSWORD_MAX, rules.PASSWORD_TOO_LONG);

export const NewOrg = z.object({
  orgName: s.requiredText(MAX.orgName),
  fullName: s.requiredText(MAX.fullName),
  email: s.email(),
  password: password(),
});

export const Login = z.object({
  email: z.string({ error: 'is required' }).min(1, 'is required'),
  password: z.string({ error: 'is required' }).min(1, 'is required'),
});
export const Logout = z.object({ refreshToken: z.string().optional() });
export const Refresh = z.object({ refreshToken: z.string({ error: 'is required' }).min(1, 'is required') });
export const Accept = z.object({ token: z.string({ error: 'is required' }).min(1, 'is required'), password: password() });

export const NewUser = z.object({
  email: s.email(),
  fullName: s.requiredText(MAX.fullName),
  role: s.enumOf(rules.USER_ROLES).default('agent'),
  department: s.text(MAX.department).default(''),
  phone: s.text(MAX.phone).default(''),
  password: password().optional(),
});

export const UserPatch = z.object({
  fullName: s.requiredText(MAX.fullName).optional(),
  role: s.enumOf(rules.USER_ROLES).optional(),
  department: s.text(MAX.department).optional(),
  phone: s.text(MAX.phone).optional(),
  avatar: s.httpUrl({ allowEmpty: true, max: MAX.avatar }).optional(),
  status: s.enumOf(rules.USER_STATUSES).optional(),
});

export const NotificationPreferences = z.object({ notifyByEmail: z.boolean({ error: 'must be true or false' }) });
export const AvailabilityChoice = z.object({ status: s.enumOf(AVAILABILITY_STATUSES) });

export const UserQuery = z.object({
  role: s.optionalQueryEnum(rules.USER_ROLES),
  department: z.string().max(MAX.department, `must be at most ${MAX.department} characters`).optional(),
  status: s.optionalQueryEnum(rules.USER_STATUSES),
  search: z.string().max(200).optional(),
  availability: s.optionalQueryEnum(AVAILABILITY_STATUSES),
});

const uuidList = z
  .array(z.string().uuid('must be a user id'), { error: 'must be an array of user ids' })
  .max(rules.MAX_TEAM_MEMBERS, `must list at most ${rules.MAX_TEAM_MEMBERS} users`);
export const NewTeam = z.object({
  name: s.requiredText(MAX.teamName),
  description: s.text(MAX.teamDescription).default(''),
  memberIds: uuidList.default([]),
});
export const TeamPatch = z.object({
  name: s.requiredText(MAX.teamName).optional(),
  description: s.text(MAX.teamDescription).optional(),
  memberIds: uuidList.optional(),
});

/** Setup, sign-in, profile, users, teams and the API key: everything identity owns. */
export function identityRoutes(deps: RouteDeps): Router {
  const { clients, auth, authLimit } = deps;
  const r = Router();
  const identity = clients.identity;

  // First run and sign-in: no bearer token yet.
  r.get('/setup/status', async (req, res) => {
    // Only whether setup is still needed: how many organizations a deployment hosts is nobody's business here.
    const out = await identity.GetSetupStatus({}, ctxOf(req, res));
    res.json({ setupRequired: out.setupRequired });
  });
  r.post('/setup', authLimit, async (req, res) => {
    res.status(201).json(await identity.Setup(body(req, NewOrg), ctxOf(req, res)));
  });
  r.post('/auth/signup', authLimit, async (req, res) => {
    res.status(201).json(await identity.Signup(body(req, NewOrg), ctxOf(req, res)));
  });
  r.post('/auth/login', authLimit, async (req, res) => {
    res.json(await identity.Login(body(req, Login), ctxOf(req, res)));
  });
  r.post('/auth/refresh', authLimit, async (req, res) => {
    res.json(await identity.Refresh(body(req, Refresh), ctxOf(req, res)));
  });
  r.post('/auth/invitations/accept', authLimit, async (req, res) => {
    res.json(await identity.AcceptInvitation(body(req, Accept), ctxOf(req, res)));
  });

  // Everything below needs a signed-in user.
  r.post('/auth/logout', auth.bearer, async (req, res) => {
    const p = principalOf(res);
    const { refreshToken } = body(req, Logout);
    const out = await identity.Logout({ refreshToken: refreshToken ?? '', jti: p.jti, accessExpiresAt: p.exp }, ctxOf(req, res));
    res.json({ message: out.message });
  });

  r.get('/profile', auth.bearer, async (req, res) => {
    res.json(userOut(await identity.GetProfile({}, ctxOf(req, res))));
  });

  // The signed-in user's own preferences; there is no route to read or set another user's.
  r.get('/profile/notifications', auth.bearer, async (req, res) => {
    res.json(await identity.GetNotificationPreferences({}, ctxOf(req, res)));
  });
  r.put('/profile/notifications', auth.bearer, async (req, res) => {
    res.json(await identity.SetNotificationPreferences(body(req, NotificationPreferences), ctxOf(req, res)));
  });

  // The signed-in user's own availability: what they chose and what others see (offline with no socket for a while).
  r.get('/profile/availability', auth.bearer, async (req, res) => {
    res.json(await identity.GetAvailability({}, ctxOf(req, res)));
  });
  r.put('/profile/availability', auth.bearer, async (req, res) => {
    res.json(await identity.SetAvailability(body(req, AvailabilityChoice), ctxOf(req, res)));
  });

  r.get('/users', auth.bearer, async (req, res) => {
    const out = await identity.ListUsers({ ...pageParams(req, 50), ...query(req, UserQuery) }, ctxOf(req, res));
    res.json({ data: out.data.map(userOut), pagination: out.pagination });
  });
  r.post('/users', auth.bearer, async (req, res) => {
    res.status(201).json(createdUserOut(await identity.CreateUser(body(req, NewUser), ctxOf(req, res))));
  });
  r.get('/users/:id', auth.bearer, async (req, res) => {
    res.json(userOut(await identity.GetUser({ id: pathParam(req, 'id') }, ctxOf(req, res))));
  });
  r.put('/users/:id', auth.bearer, async (req, res) => {
    res.json(userOut(await identity.UpdateUser({ id: pathParam(req, 'id'), ...body(req, UserPatch) }, ctxOf(req, res))));
  });
  r.delete('/users/:id', auth.bearer, async (req, res) => {
    await identity.DeactivateUser({ id: pathParam(req, 'id') }, ctxOf(req, res));
    res.status(204).end();
  });

  r.get('/teams', auth.bearer, async (req, res) => {
    const { data } = await identity.ListTeams({}, ctxOf(req, res));
    res.json(data.map(teamBriefOut));
  });
  r.post('/teams', auth.bearer, async (req, res) => {
    res.status(201).json(teamOut(await identity.CreateTeam({ ...body(req, NewTeam), setMembers: true }, ctxOf(req, res))));
  });
  r.get('/teams/:id', auth.bearer, async (req, res) => {
    res.json(teamOut(await identity.GetTeam({ id: pathParam(req, 'id') }, ctxOf(req, res))));
  });
  r.put('/teams/:id', auth.bearer, async (req, res) => {
    const patch = body(req, TeamPatch);
    res.json(
      teamOut(
        await identity.UpdateTeam(
          { id: pathParam(req, 'id'), ...patch, memberIds: patch.memberIds ?? [], setMembers: patch.memberIds !== undefined },
          ctxOf(req, res),
        ),
      ),
    );
  });
  r.delete('/teams/:id', auth.bearer, async (req, res) => {
    await identity.DeleteTeam({ id: pathParam(req, 'id') }, ctxOf(req, res));
    res.status(204).end();
  });

  r.get('/settings/api-key', auth.bearer, async (req, res) => {
    res.json(apiKeyOut(await identity.GetApiKey({}, ctxOf(req, res))));
  });
  r.post('/settings/api-key/generate', auth.bearer, async (req, res) => {
    res.status(201).json(await identity.GenerateApiKey({}, ctxOf(req, res)));
  });

  r.use(apiKeyRoutes(deps));
  r.use(auditLogRoutes(deps));

  return r;
}
