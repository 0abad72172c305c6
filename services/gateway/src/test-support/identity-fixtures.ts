// Sample identity answers for the mapper tests (not part of the build: tsconfig excludes src/test-support).
import type { identity } from '@crm/proto-types';
import { AT, ID, OTHER_ID } from './crm-fixtures';

/** A user as identity answers the gateway: no department, phone, avatar or sign-in yet, so offline. */
export function user(over: Partial<identity.User__Output> = {}): identity.User__Output {
  return {
    id: ID,
    email: 'ann@example.com',
    fullName: 'Ann',
    role: 'agent',
    orgId: OTHER_ID,
    department: '',
    phone: '',
    avatar: '',
    status: 'active',
    createdAt: AT,
    availability: 'offline',
    ...over,
  };
}

export function createdUser(over: Partial<identity.CreateUserResult__Output> = {}): identity.CreateUserResult__Output {
  return { id: ID, email: 'ann@example.com', fullName: 'Ann', role: 'agent', createdAt: AT, invitationSent: false, ...over };
}

export function team(over: Partial<identity.Team__Output> = {}): identity.Team__Output {
  return { id: ID, name: 'Sales', description: '', memberCount: 1, memberIds: [OTHER_ID], createdAt: AT, ...over };
}

/** An entry written by the system: no actor, resource, ip or request id, no details. */
export function auditEntry(over: Partial<identity.AuditEntry__Output> = {}): identity.AuditEntry__Output {
  return {
    id: ID,
    actorId: '',
    actorType: 'system',
    action: 'user.created',
    resourceType: 'user',
    resourceId: '',
    detailsJson: '',
    ip: '',
    requestId: '',
    createdAt: AT,
    ...over,
  };
}
