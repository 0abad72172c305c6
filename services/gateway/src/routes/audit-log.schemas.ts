import { z } from 'zod';
import { identityRules as rules } from '@crm/validation';
import { s } from '../http/validate';

export const AuditQuery = z.object({
  actorId: z.string().uuid('must be a user id').optional(),
  action: z.string().max(rules.AUDIT_ACTION_MAX, rules.AUDIT_ACTION_MESSAGE).regex(rules.AUDIT_ACTION_PATTERN, rules.AUDIT_ACTION_MESSAGE).optional(),
  from: s.dateOrTimestamp().optional(),
  to: s.dateOrTimestamp().optional(),
});

/** identity.out auditEntryOut: absent values as null, details as an object. */
export const AuditEntry = z.object({
  id: z.string(),
  actorId: z.string().nullable(),
  actorType: z.string(),
  action: z.string(),
  resourceType: z.string(),
  resourceId: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  ip: z.string().nullable(),
  requestId: z.string().nullable(),
  createdAt: z.string(),
});
