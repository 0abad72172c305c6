import type { Express } from 'express';

/** What is read of the router's layers (express 5 / router 2: `match(path)` keeps no request state). */
interface Layer {
  rawPath?: string | string[];
  match(path: string): { path: string } | false;
  route?: { path: string; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
}

const stackOf = (app: Express) => (app as unknown as { router: { stack: Layer[] } }).router.stack;
const methodsOf = (route: NonNullable<Layer['route']>) =>
  Object.entries(route.methods)
    .filter(([, on]) => on)
    .map(([m]) => (m === '_all' ? '*' : m.toUpperCase()));

/**
 * The methods the app's routes accept for `path`, found by walking the router the way express dispatches:
 * a route layer adds its methods; a mounted router (a layer whose handle has its own stack) is entered with
 * the mount path stripped. Plain middleware (auth, parsers) has neither and is passed over.
 */
export function allowedMethods(app: Express, path: string): Set<string> {
  const into = new Set<string>();
  const walk = (stack: Layer[], p: string) => {
    for (const layer of stack) {
      const m = layer.match(p);
      if (!m) continue;
      if (layer.route) for (const method of methodsOf(layer.route)) into.add(method);
      else if (layer.handle.stack) {
        const rest = p.slice(m.path.length);
        walk(layer.handle.stack, rest.startsWith('/') ? rest : `/${rest}`);
      }
    }
  };
  walk(stackOf(app), path);
  return into;
}

/** Every route as `{method, path}` with its full pattern (`/api/v1/contacts/:id`), in registration order. */
export function routeTable(app: Express): { method: string; path: string }[] {
  const out: { method: string; path: string }[] = [];
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) for (const method of methodsOf(layer.route)) out.push({ method, path: prefix + layer.route.path });
      else if (layer.handle.stack && typeof layer.rawPath === 'string')
        walk(layer.handle.stack, prefix + (layer.rawPath === '/' ? '' : layer.rawPath));
    }
  };
  walk(stackOf(app), '');
  return out;
}

/**
 * Each route object of the app → its full template (mount path + route path), for labelling metrics by the route
 * that handled a request. A route mounted under two prefixes keeps the first one.
 */
export function routeTemplates(app: Express): WeakMap<object, string> {
  const out = new WeakMap<object, string>();
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        if (!out.has(layer.route)) out.set(layer.route, prefix + layer.route.path);
      } else if (layer.handle.stack && typeof layer.rawPath === 'string')
        walk(layer.handle.stack, prefix + (layer.rawPath === '/' ? '' : layer.rawPath));
    }
  };
  walk(stackOf(app), '');
  return out;
}
