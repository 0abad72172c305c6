import { AppError } from './errors';
import { Permission, requirePermission } from './permissions';

/**
 * Who is calling, as the gateway verified it and signed it into the internal credential (see internal-auth.ts).
 * Servers build this only from a verified token, never from loose metadata, and every query filters on `orgId`.
 */
export interface CallContext {
  orgId: string;
  userId: string;
  role: string;
  requestId: string;
  clientIp: string;
  /** Who signed the call: 'gateway' or the calling service's name (set by the server, ignored when sending). */
  caller?: string;
  /**
   * When sending: the W3C `traceparent` the call continues, for a caller that carries its trace context explicitly
   * (the gateway's request). Without it the active span's is sent. Not part of the credential; servers leave it unset.
   */
  traceparent?: string;
}

/** The metadata key that carries the internal credential (`Bearer <token>`). */
export const AUTH_METADATA_KEY = 'authorization';
/** The request id, beside the credential: it labels logs across services. */
export const REQUEST_ID_METADATA_KEY = 'x-request-id';

/** For handlers that act inside an organization: fails closed when the gateway sent no org. */
export function requireOrg(ctx: CallContext): string {
  if (!ctx.orgId) throw new AppError('unauthenticated', 'No organization in call metadata');
  return ctx.orgId;
}

export function requireUser(ctx: CallContext): { orgId: string; userId: string; role: string } {
  const orgId = requireOrg(ctx);
  if (!ctx.userId) throw new AppError('unauthenticated', 'No user in call metadata');
  return { orgId, userId: ctx.userId, role: ctx.role };
}

export function requireCan(ctx: CallContext, permission: Permission): void {
  requireOrg(ctx);
  requirePermission(ctx.role, permission);
}
