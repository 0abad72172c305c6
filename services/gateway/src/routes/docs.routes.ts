import path from 'node:path';
import express, { Router } from 'express';
import { z } from 'zod';
import type { OpenApiDocument } from '../docs/openapi';
import { EDGE_REFUSALS } from '../docs/registry';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import type { RouteDeps } from './deps';

/**
 * What builds the documents (docs/index.ts and openapi.ts: the operations in the document's order, JSON Schema from
 * zod, the webhook events' catalogue), loaded on the first request for a document: most processes never serve one.
 */
let docsModule: typeof import('../docs') | undefined;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const docs = () => (docsModule ??= require('../docs') as typeof import('../docs'));

const PUBLIC_DIR = path.join(__dirname, '..', '..', 'public');
/** The files of Swagger UI the page loads; the package's own index.html (it points at a demo API) is not served. */
const SWAGGER_FILES = new Set(['swagger-ui-bundle.js', 'swagger-ui.css', 'favicon-16x16.png', 'favicon-32x32.png']);

/** An OpenAPI document, as far as its readers rely on it. */
const OpenApi = z.looseObject({
  openapi: z.literal('3.1.0'),
  info: z.looseObject({}),
  paths: z.record(z.string(), z.unknown()),
  components: z.looseObject({}),
});
const serverOf = (deps: RouteDeps) => deps.config.PUBLIC_URL.replace(/\/$/, '');

/**
 * Each document built once per process and kept: building one turns every operation's zod schemas into JSON Schema
 * (~100 ms of CPU for the whole document here), and these routes take no credential, so a client asking again and
 * again must not cost that each time. What a document holds depends only on the server URL and the operations the
 * configuration serves, which is the key (tests run gateways of different configurations in one process).
 */
const built = new Map<string, OpenApiDocument>();
function documentFor(kind: 'gateway' | 'public', deps: RouteDeps): OpenApiDocument {
  const key = `${kind} ${serverOf(deps)} ${deps.config.NODE_ENV} ${deps.config.CHATNET_DRIVER}`;
  let doc = built.get(key);
  if (!doc) {
    const ops = docs().servedOperations(deps.config);
    doc = kind === 'gateway' ? docs().gatewayDocument(ops, serverOf(deps)) : docs().publicDocument(ops, serverOf(deps));
    built.set(key, doc);
  }
  return doc;
}

/** The documents themselves, readable without a credential so integrators can read them before they have one. */
export const docsArea = routeArea({ prefix: '', auth: 'none', tag: 'Documentation' });
docsArea.route('GET /openapi.json', {
  summary: 'This document: every route the gateway serves (OpenAPI 3.1)',
  response: OpenApi,
  errors: EDGE_REFUSALS,
  handler: async ({ deps }) => documentFor('gateway', deps),
});
docsArea.route('GET /api/public/openapi.json', {
  summary: 'The public API only (OpenAPI 3.1), generated from the same operations',
  response: OpenApi,
  errors: EDGE_REFUSALS,
  handler: async ({ deps }) => documentFor('public', deps),
});

/**
 * The API's documentation: GET /openapi.json (every route the gateway serves), GET /api/public/openapi.json (the
 * public API only, the same operations filtered) and GET /docs, an interactive reference (Swagger UI from the npm
 * package) served entirely from here: its CSP admits no other host for scripts, styles, fonts, images or requests.
 */
export function docsRoutes(deps: RouteDeps): Router {
  const r = Router().use(docsArea.router(deps, responseContract(deps.config)));

  const selfOnly = (_req: express.Request, res: express.Response, next: express.NextFunction) => {
    // Swagger UI sets style attributes from script, hence 'unsafe-inline' for styles; nothing else is relaxed.
    res.setHeader(
      'Content-Security-Policy',
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'self'",
    );
    next();
  };
  r.get('/docs', selfOnly, (_req, res) => res.sendFile(path.join(PUBLIC_DIR, 'docs.html')));
  const swagger = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  r.get('/docs/assets/:file', selfOnly, (req, res, next) => {
    if (!SWAGGER_FILES.has(String(req.params.file))) return next();
    res.sendFile(path.join(swagger, String(req.params.file)), { maxAge: '1h' });
  });
  return r;
}
