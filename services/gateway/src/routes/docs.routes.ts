import path from 'node:path';
import express, { Router } from 'express';
import type { RouteDeps } from './deps';

/**
 * The documentation's operations and schemas, loaded on the first request for a document: they are a third of what
 * the gateway loads at start (every operation's zod schemas), which every start (and every test's stack) paid for
 * documents most processes never serve.
 */
let docsModule: typeof import('../docs') | undefined;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const docs = () => (docsModule ??= require('../docs') as typeof import('../docs'));

const PUBLIC_DIR = path.join(__dirname, '..', '..', 'public');
/** The files of Swagger UI the page loads; the package's own index.html (it points at a demo API) is not served. */
const SWAGGER_FILES = new Set(['swagger-ui-bundle.js', 'swagger-ui.css', 'favicon-16x16.png', 'favicon-32x32.png']);

/**
 * The API's documentation, readable without a credential so integrators can read it before they have one:
 * GET /openapi.json (every route the gateway serves), GET /api/public/openapi.json (the public API only,
 * the same operations filtered) and GET /docs, an interactive reference (Swagger UI from the npm package)
 * served entirely from here: its CSP admits no other host for scripts, styles, fonts, images or requests.
 */
export function docsRoutes({ config }: RouteDeps): Router {
  const r = Router();
  // Built once, on first use: the operations do not change while the process runs.
  let served: ReturnType<ReturnType<typeof docs>['servedOperations']> | undefined;
  const ops = () => (served ??= docs().servedOperations(config));
  const server = config.PUBLIC_URL.replace(/\/$/, '');
  r.get('/openapi.json', (_req, res) => {
    res.json(docs().gatewayDocument(ops(), server));
  });
  r.get('/api/public/openapi.json', (_req, res) => {
    res.json(docs().publicDocument(ops(), server));
  });

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
