import { z } from 'zod';
import { API_KEY_SCOPES } from '@crm/auth';
import type { identity } from '@crm/proto-types';
import { AVAILABILITY_STATUSES } from '@crm/events';
import { identityRules as rules } from '@crm/validation';
import { nulls, reply } from '../docs/proto-schema';
import { s } from '../http/validate';

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

export const NewApiKey = z.object({
  name: z.string().trim().min(1, 'is required').max(100),
  scopes: z.array(z.enum(API_KEY_SCOPES, { message: `must each be one of ${API_KEY_SCOPES.join(', ')}` })).min(1, 'must name at least one scope'),
  userId: z.string().uuid('must be a user id').nullish(),
  expiresAt: s.timestamp().nullish(),
});

/** The org's API settings: the body of PUT /settings/api and the answer of both routes. */
export const ApiSettings = z.object({ agentKeys: z.boolean() });

/** A service's answer forwarded untouched: documented from its proto, typed as the generated client gives it. */
const forwarded = <T>(schema: z.ZodObject) => schema as unknown as z.ZodType<T>;

export const SetupStatus = z.object({ setupRequired: z.boolean() });
/** What setup, signup, login, refresh and accepting an invitation answer: identity's answer as it is. */
export const AuthResult = forwarded<identity.AuthResult__Output>(reply('identity', 'Login'));

/** userOut: unset department, phone, avatar and lastLogin (never signed in) are null. */
export const User = nulls(reply('identity', 'GetProfile'), ['department', 'phone', 'avatar', 'lastLogin']);
/** createdUserOut: the invited user (lastLogin and inviteUrl null when none). */
export const CreatedUser = nulls(reply('identity', 'CreateUser'), ['lastLogin', 'inviteUrl']);
/** teamOut: no description is null. */
export const Team = nulls(reply('identity', 'GetTeam'), ['description']);
/** teamBriefOut: the list of teams leaves the member ids out. */
export const TeamBrief = Team.omit({ memberIds: true });

export const NotificationPreferencesOut = forwarded<identity.NotificationPreferences__Output>(reply('identity', 'GetNotificationPreferences'));
export const NotificationPreferencesSet = forwarded<identity.NotificationPreferences__Output>(reply('identity', 'SetNotificationPreferences'));
export const Availability = forwarded<identity.Availability__Output>(reply('identity', 'GetAvailability'));
export const AvailabilitySet = forwarded<identity.Availability__Output>(reply('identity', 'SetAvailability'));

/** apiKeyOut: the mask only, never the key. */
export const ApiKeyInfo = z.object({ hasKey: z.boolean(), keyMask: z.string(), createdAt: z.string().nullable() });
export const GeneratedApiKey = forwarded<identity.GeneratedApiKey__Output>(reply('identity', 'GenerateApiKey'));

/** namedApiKeyOut: never the key, except in the creation answer. */
export const NamedApiKey = z.object({
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
export const CreatedApiKey = NamedApiKey.required({ key: true });
export const ListedApiKey = NamedApiKey.omit({ key: true });
