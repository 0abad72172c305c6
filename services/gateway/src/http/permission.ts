import type { RequestHandler } from 'express';
import { can, type Permission } from '@crm/grpc-kit';
import { HttpError } from './errors';
import { principalOf } from './principal';

/**
 * Refuse at the edge a caller whose role lacks `permission`, before any service is called. The service
 * stays the authority and checks again; this keeps a route added later without its own check from
 * leaking what the service forgot to guard.
 */
export function requirePermission(permission: Permission): RequestHandler {
  return (_req, res, next) => {
    if (can(principalOf(res).role, permission)) return next();
    next(new HttpError(403, 'forbidden', `This action needs permission ${permission}`));
  };
}
