import type { RequestHandler, Router } from 'express';

/** What is read of a router's layers (express 5 / router 2), as in route-table.ts. */
interface Layer {
  rawPath?: unknown;
  route?: { path: unknown };
  handle: { stack?: Layer[] };
}

/** A first segment that only ever matches itself: no parameter, wildcard, optional part or group. */
const LITERAL = /^[^:*?(){}+\\]*$/;

/** `contacts` of `/contacts/:id`; undefined when the path is not a plain string. */
function firstSegmentOfPattern(path: unknown): string | undefined {
  if (typeof path !== 'string' || !path.startsWith('/')) return undefined;
  const end = path.indexOf('/', 1);
  const segment = (end < 0 ? path.slice(1) : path.slice(1, end)).toLowerCase();
  return LITERAL.test(segment) ? segment : undefined;
}

/**
 * The first path segments some layer of `stack` can match, or undefined when one layer could match any (a
 * parameter or wildcard first, or middleware mounted at `/` that is not a router we can look into).
 */
function firstSegments(stack: Layer[], into = new Set<string>()): Set<string> | undefined {
  for (const layer of stack) {
    if (layer.route) {
      const segment = firstSegmentOfPattern(layer.route.path);
      if (segment === undefined) return undefined;
      into.add(segment);
    } else if (layer.rawPath === '/' && layer.handle.stack) {
      if (!firstSegments(layer.handle.stack, into)) return undefined;
    } else {
      const segment = firstSegmentOfPattern(layer.rawPath);
      if (!segment) return undefined;
      into.add(segment);
    }
  }
  return into;
}

/**
 * The request's first segment below the router's mount point, as the router sees `req.url` (`/contacts/1?x`);
 * undefined for an absolute-form URL (`http://host/…`), which the router is left to match itself.
 */
function firstSegmentOf(url: string): string | undefined {
  if (url.charCodeAt(0) !== 47) return undefined;
  let end = 1;
  while (end < url.length) {
    const c = url.charCodeAt(end);
    if (c === 47 /* / */ || c === 63 /* ? */) break;
    end++;
  }
  return url.slice(1, end).toLowerCase();
}

/**
 * `router`, entered only for requests whose first path segment one of its routes starts with. A request walks
 * every router mounted before the one that serves it, and entering one costs its dispatch state plus a match
 * attempt per route; with a module per backend, most of a request's routing went to routers that could not serve
 * it. The answer is the same: a router skipped here has no route or middleware that could match the path (segments
 * compare case-insensitively, as express matches). A router that could match any segment is always entered.
 * The guard keeps the router's `stack`, so route-table.ts (405s, route listing, metric labels) still sees its routes.
 */
export function bySegment(router: Router): RequestHandler {
  const stack = (router as unknown as { stack: Layer[] }).stack;
  // Read on the first request, once every route is registered.
  let segments: Set<string> | null | undefined;
  const guarded: RequestHandler = (req, res, next) => {
    if (segments === undefined) segments = firstSegments(stack) ?? null;
    if (segments) {
      const segment = firstSegmentOf(req.url);
      if (segment !== undefined && !segments.has(segment)) return next();
    }
    router(req, res, next);
  };
  return Object.assign(guarded, { stack });
}
