import { Metadata } from '@grpc/grpc-js';
import { AppError } from './errors';
import { Permission, requirePermission } from './permissions';

/**
 * Who is calling, as the gateway verified it. Services trust only this metadata (their ports are never
 * exposed), and every query filters on `orgId`.
 */
export interface CallContext {
  orgId: string;
  userId: string;
  role: string;
  requestId: string;
  clientIp: string;
  /** Who signed the call: 'gateway' or the calling service's name (set by the server, ignored when sending). */
  caller?: string;
}

/** The metadata key that carries the internal credential (`Bearer <token>`). */
export const AUTH_METADATA_KEY = 'authorization';

export const META = {
  org: 'x-org-id',
  user: 'x-user-id',
  role: 'x-role',
  requestId: 'x-request-id',
  clientIp: 'x-client-ip',
} as const;

export function contextFromMetadata(md: Metadata): CallContext {
  const get = (k: string) => (md.get(k)[0] as string | undefined) ?? '';
  return { orgId: get(META.org), userId: get(META.user), role: get(META.role), requestId: get(META.requestId), clientIp: get(META.clientIp) };
}

export function metadataFromContext(ctx: Partial<CallContext>): Metadata {
  const md = new Metadata();
  if (ctx.orgId) md.set(META.org, ctx.orgId);
  if (ctx.userId) md.set(META.user, ctx.userId);
  if (ctx.role) md.set(META.role, ctx.role);
  if (ctx.requestId) md.set(META.requestId, ctx.requestId);
  if (ctx.clientIp) md.set(META.clientIp, ctx.clientIp);
  return md;
}

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
