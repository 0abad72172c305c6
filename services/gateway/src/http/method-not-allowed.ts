import type { Express, RequestHandler } from 'express';
import { sendError } from './errors';

/** What this module reads of the router's layers (express 5 / router 2: `match(path)` keeps no request state). */
interface Layer {
  match(path: string): { path: string } | false;
  route?: { methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
}

/**
 * The methods the app's routes accept for `path`, found by walking the router the way express dispatches:
 * a route layer adds its methods; a mounted router (a layer whose handle has its own stack) is entered with
 * the mount path stripped. Plain middleware (auth, parsers) has neither and is passed over.
 */
function allowedMethods(stack: Layer[], path: string, into: Set<string>): Set<string> {
  for (const layer of stack) {
    const m = layer.match(path);
    if (!m) continue;
    if (layer.route) {
      for (const [method, on] of Object.entries(layer.route.methods)) if (on) into.add(method === '_all' ? '*' : method.toUpperCase());
    } else if (layer.handle.stack) {
      const rest = path.slice(m.path.length);
      allowedMethods(layer.handle.stack, rest.startsWith('/') ? rest : `/${rest}`, into);
    }
  }
  return into;
}

/**
 * A path that some route serves, asked with a method none of them takes, is a 405 with `Allow`, answered
 * before authentication: the method is wrong whoever asks, and a 401 or 404 would send the client looking
 * for the wrong mistake. Mounted first; it reads the app's router at request time, so it sees every route
 * registered after it. HEAD is allowed wherever GET is (express answers it), OPTIONS is left to express.
 */
export function methodNotAllowed(app: Express): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'OPTIONS') return next();
    const allowed = allowedMethods((app as unknown as { router: { stack: Layer[] } }).router.stack, req.path, new Set());
    if (allowed.size === 0 || allowed.has('*') || allowed.has(req.method) || (req.method === 'HEAD' && allowed.has('GET'))) return next();
    if (allowed.has('GET')) allowed.add('HEAD');
    const allow = [...allowed].sort().join(', ');
    res.setHeader('Allow', allow);
    sendError(res, 405, 'method_not_allowed', `${req.method} is not allowed on ${req.path}; use ${allow}`);
  };
}
