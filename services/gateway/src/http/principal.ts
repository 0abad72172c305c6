import type { Request, Response } from 'express';
import type { ApiKeyScope } from '@crm/auth';
import type { CallContext } from '@crm/grpc-kit';

/**
 * Who is calling, as verified at the edge: a signed-in user (JWT) or an integration (API key: bound to a user, it
 * carries that user's id and role, so the services' visibility rules apply to it as to the user).
 */
export interface Principal {
  kind: 'user' | 'api_key';
  orgId: string;
  userId: string;
  role: string;
  jti?: string;
  exp?: number;
  /** An API key's id and what it may call (scopes.ts); the org's own key holds every scope. */
  keyId?: string;
  scopes?: readonly ApiKeyScope[];
}

export function principalOf(res: Response): Principal {
  const p = res.locals.principal as Principal | undefined;
  if (!p) throw new Error('route reached without authentication middleware');
  return p;
}

/** The gRPC call context built from the verified credential; services trust only this. */
export function ctxOf(req: Request, res: Response): CallContext {
  const p = res.locals.principal as Principal | undefined;
  return {
    orgId: p?.orgId ?? '',
    userId: p?.userId ?? '',
    role: p?.role ?? '',
    requestId: res.locals.requestId,
    clientIp: req.ip ?? '',
    // Explicitly, not through the active span: see tracing.ts.
    traceparent: res.locals.traceparent,
  };
}
