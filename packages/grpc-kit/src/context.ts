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
   * (the gateway's request). Without it the active span's is sent. When serving: the server span's, set by the
   * server, so a handler passes its trace on explicitly (its `ctx` to the next call, `traceparent` to the events it
   * enqueues) in a process without an active context (@crm/telemetry's `activeContext`). Not part of the credential.
   */
  traceparent?: string;
  /**
   * The token that vouches for the call's org (set by the server; sent on by clients when a handler passes its
   * context along): the gateway's signed user for a request, else the credential of the service that made the call.
   * A service calling on behalf of a call it serves forwards it, so the next service knows the org was not the
   * caller's own choice (ORIGIN_BOUND in internal-auth.ts).
   */
  origin?: string;
}

/** The metadata key that carries the internal credential (`Bearer <token>`). */
export const AUTH_METADATA_KEY = 'authorization';
/** The call's origin (CallContext.origin), beside the credential. */
export const ORIGIN_METADATA_KEY = 'x-crm-origin';
/** The request id, beside the credential: it labels logs across services. */
export const REQUEST_ID_METADATA_KEY = 'x-request-id';

declare const orgChecked: unique symbol;

/**
 * A call context whose org was checked: the server wrapper gives one to every handler but the org-free ones
 * (org-free.ts), and `orgContext` makes one elsewhere (event consumers, the HTTP port). Functions that act inside
 * an organization take this type, so a call that skipped the check does not compile.
 */
export type OrgContext = CallContext & { readonly [orgChecked]: true };

/** The org check: fails closed when the caller sent no org. */
export function orgContext(ctx: CallContext): OrgContext {
  if (!ctx.orgId) throw new AppError('unauthenticated', 'No organization in call metadata');
  return ctx as OrgContext;
}

/** For code not yet converted to `OrgContext` (the server wrapper checks the org first anyway). */
export function requireOrg(ctx: CallContext): string {
  return orgContext(ctx).orgId;
}

/** The org was checked (OrgContext); this checks there is a user. */
export function requireUser(ctx: OrgContext): { orgId: string; userId: string; role: string } {
  if (!ctx.userId) throw new AppError('unauthenticated', 'No user in call metadata');
  return { orgId: ctx.orgId, userId: ctx.userId, role: ctx.role };
}

export function requireCan(ctx: OrgContext, permission: Permission): void {
  requirePermission(ctx.role, permission);
}
