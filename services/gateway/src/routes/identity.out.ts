import type { z } from 'zod';
import type { ApiKeyScope } from '@crm/auth';
import type { identity } from '@crm/proto-types';
import { orNull } from '../http/shape';
import type { AuditEntry as AuditEntryOut } from './audit-log.schemas';
import type {
  ApiKeyInfo as ApiKeyInfoOut,
  CreatedApiKey,
  CreatedUser as CreatedUserOut,
  ListedApiKey,
  NamedApiKey,
  Team as TeamOut,
  TeamBrief,
  User as UserOut,
} from './identity.schemas';

type User = identity.User__Output;
type CreatedUser = identity.CreateUserResult__Output;
type Team = identity.Team__Output;
type ApiKeyInfo = identity.ApiKeyInfo__Output;
type AuditEntry = identity.AuditEntry__Output;

/**
 * The User resource: unset department, phone and avatar are null; lastLogin is null until the first sign-in;
 * availability is the effective one (online, away, offline).
 */
export function userOut(u: User): z.input<typeof UserOut> {
  return {
    id: u.id,
    email: u.email,
    fullName: u.fullName,
    role: u.role,
    orgId: u.orgId,
    department: orNull(u.department),
    phone: orNull(u.phone),
    avatar: orNull(u.avatar),
    status: u.status,
    createdAt: u.createdAt,
    lastLogin: u.lastLogin ?? null,
    availability: u.availability,
  };
}

/** The answer of POST /users: the new user has never signed in yet (identity says so: lastLogin unset). */
export function createdUserOut(u: CreatedUser): z.input<typeof CreatedUserOut> {
  return {
    id: u.id,
    email: u.email,
    fullName: u.fullName,
    role: u.role,
    createdAt: u.createdAt,
    invitationSent: u.invitationSent,
    inviteUrl: u.inviteUrl ?? null,
    lastLogin: u.lastLogin ?? null,
  };
}

/** A team: no description is null. */
export function teamOut(t: Team): z.input<typeof TeamOut> & { memberIds: string[] } {
  return { id: t.id, name: t.name, description: orNull(t.description), memberCount: t.memberCount, memberIds: t.memberIds, createdAt: t.createdAt };
}

/** The list of teams leaves the member ids out (GET /teams/:id has them). */
export function teamBriefOut(t: Team): z.input<typeof TeamBrief> {
  const { memberIds: _memberIds, ...brief } = teamOut(t);
  return brief;
}

/** Whether the org has an API key: its mask only, never the key. */
export function apiKeyOut(k: ApiKeyInfo): z.input<typeof ApiKeyInfoOut> {
  return { hasKey: k.hasKey, keyMask: k.keyMask, createdAt: k.createdAt ?? null };
}

/** An audit-log entry: empty proto strings are the absent values; details come back from their JSON text. */
export function auditEntryOut(e: AuditEntry): z.input<typeof AuditEntryOut> {
  return {
    id: e.id,
    actorId: orNull(e.actorId),
    actorType: e.actorType,
    action: e.action,
    resourceType: e.resourceType,
    resourceId: orNull(e.resourceId),
    details: e.detailsJson ? (JSON.parse(e.detailsJson) as Record<string, unknown>) : {},
    ip: orNull(e.ip),
    requestId: orNull(e.requestId),
    createdAt: e.createdAt,
  };
}

/** A named API key: absent values as null; `key` only when given (the creation answer, shown once). */
export function namedApiKeyOut(k: identity.NamedApiKey__Output, key: string): z.input<typeof CreatedApiKey>;
export function namedApiKeyOut(k: identity.NamedApiKey__Output): z.input<typeof ListedApiKey>;
export function namedApiKeyOut(k: identity.NamedApiKey__Output, key?: string): z.input<typeof NamedApiKey> {
  return {
    id: k.id,
    name: k.name,
    // identity keeps only the scopes it was given, which the body's enum checked.
    scopes: k.scopes as ApiKeyScope[],
    userId: k.userId ?? null,
    prefix: k.prefix,
    ...(key ? { key } : {}),
    createdAt: k.createdAt,
    expiresAt: k.expiresAt ?? null,
    lastUsedAt: k.lastUsedAt ?? null,
  };
}
