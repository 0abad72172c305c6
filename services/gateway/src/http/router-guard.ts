import type { RequestHandler, Router } from 'express';

/** What is read of a router's layers (express 5 / router 2), as in route-table.ts. */
interface Layer {
  match(path: string): { path: string } | false;
  route?: unknown;
  handle: { stack?: Layer[] };
}

/**
 * Whether some layer of `stack` matches `path`: a route (whatever its method), middleware, or a nested router with
 * such a layer for the rest of the path. Matched with the layers' own `match`, so case and trailing slashes count as
 * the router counts them; a path a layer cannot even decode (bad percent-encoding) is left to the router to refuse.
 */
function couldServe(stack: Layer[], path: string): boolean {
  for (const layer of stack) {
    let m: { path: string } | false;
    try {
      m = layer.match(path);
    } catch {
      return true;
    }
    if (!m) continue;
    if (layer.route || !layer.handle.stack) return true;
    const rest = path.slice(m.path.length);
    if (couldServe(layer.handle.stack, rest.startsWith('/') ? rest : `/${rest}`)) return true;
  }
  return false;
}

/**
 * `routers` (mounted at one path, in this order) as one layer of the app, each entered only by requests one of its
 * layers matches. A request passes every router mounted before the one that serves it; entering one costs its
 * dispatch state (closures, a match object and a parameter step per layer) and, once it finds nothing, a trip
 * through the event loop (the router hands back with setImmediate); mounting one costs a layer of the app's router
 * for every request that goes past it. With a module per backend, that was most of a request's routing. Skipping a
 * router no layer of which matches the path changes no answer, and one that is entered behaves as if mounted on its
 * own: it keeps and restores the request's mount state, and an error it passes on skips the routers after it, as
 * the app's router would. 405s are answered before any router (method-not-allowed.ts). The layer's `stack` is the
 * routers' stacks in order, so route-table.ts (405s, the route list, metric labels) still sees every route.
 */
export function whenRouted(...routers: Router[]): RequestHandler {
  const stacks = routers.map((r) => (r as unknown as { stack: Layer[] }).stack);
  const guarded: RequestHandler = (req, res, next) => {
    // req.path: the path below the mount point, as the routers read it (parsed once per URL and cached).
    const path = req.path;
    let i = 0;
    const tryNext = (err?: unknown): void => {
      if (err) return next(err);
      while (i < routers.length && !couldServe(stacks[i], path)) i++;
      if (i === routers.length) return next();
      routers[i++](req, res, tryNext);
    };
    tryNext();
  };
  // Read at request time by route-table.ts; a getter, so routes added to a router after mounting are seen too.
  return Object.defineProperty(guarded, 'stack', { get: () => stacks.flat() });
}
