import type { Express, RequestHandler } from 'express';
import { sendError } from './errors';
import { allowedMethods } from './route-table';

/**
 * A path that some route serves, asked with a method none of them takes, is a 405 with `Allow`, answered
 * before authentication: the method is wrong whoever asks, and a 401 or 404 would send the client looking
 * for the wrong mistake. Mounted first; it reads the app's router at request time, so it sees every route
 * registered after it. HEAD is allowed wherever GET is (express answers it), OPTIONS is left to express.
 */
export function methodNotAllowed(app: Express): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'OPTIONS') return next();
    const allowed = allowedMethods(app, req.path);
    if (allowed.size === 0 || allowed.has('*') || allowed.has(req.method) || (req.method === 'HEAD' && allowed.has('GET'))) return next();
    if (allowed.has('GET')) allowed.add('HEAD');
    const allow = [...allowed].sort().join(', ');
    res.setHeader('Allow', allow);
    sendError(res, 405, 'method_not_allowed', `${req.method} is not allowed on ${req.path}; use ${allow}`);
  };
}
