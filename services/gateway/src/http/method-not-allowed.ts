import type { Express, RequestHandler } from 'express';
import { sendError } from './errors';
import { allowedMethods } from './route-table';

const UUID_SEGMENT = /\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?=\/|$)/gi;
const CACHE_ENTRIES = 2000;

/**
 * A path that some route serves, asked with a method none of them takes, is a 405 with `Allow`, answered
 * before authentication: the method is wrong whoever asks, and a 401 or 404 would send the client looking
 * for the wrong mistake. Mounted first; it reads the app's router at request time, so it sees every route
 * registered after it. HEAD is allowed wherever GET is (express answers it), OPTIONS is left to express.
 */
export function methodNotAllowed(app: Express): RequestHandler {
  const cache = new Map<string, Set<string>>();
  // Walking every route costs ~20 µs, on every request. Routes are fixed once the app is built and match an id
  // segment whatever its value, so the answer is cached per path with UUIDs folded to one placeholder; other
  // ids (and junk) can still vary, so the cache is bounded.
  const allowedFor = (path: string): Set<string> => {
    const key = path.replace(UUID_SEGMENT, '/00000000-0000-4000-8000-000000000000');
    let allowed = cache.get(key);
    if (!allowed) {
      if (cache.size >= CACHE_ENTRIES) cache.clear();
      allowed = allowedMethods(app, key);
      cache.set(key, allowed);
    }
    return allowed;
  };
  return (req, res, next) => {
    if (req.method === 'OPTIONS') return next();
    const routes = allowedFor(req.path);
    if (routes.size === 0 || routes.has('*') || routes.has(req.method) || (req.method === 'HEAD' && routes.has('GET'))) return next();
    const allowed = new Set(routes);
    if (allowed.has('GET')) allowed.add('HEAD');
    const allow = [...allowed].sort().join(', ');
    res.setHeader('Allow', allow);
    sendError(res, 405, 'method_not_allowed', `${req.method} is not allowed on ${req.path}; use ${allow}`);
  };
}
