import type { Request, Response } from 'express';
import type { CallContext } from '@crm/grpc-kit';

/** Who is calling, as verified at the edge: a signed-in user (JWT) or an integration (API key). */
export interface Principal {
  kind: 'user' | 'api_key';
  orgId: string;
  userId: string;
  role: string;
  jti?: string;
  exp?: number;
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
