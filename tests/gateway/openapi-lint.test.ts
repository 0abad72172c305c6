import { gatewayDocument, publicDocument, servedOperations } from '../../services/gateway/src/docs';
import { redoclyLint } from '../support/redocly-lint';

/**
 * `redocly lint` with its recommended rules finds nothing, not even a warning, in either document the gateway serves:
 * docs.routes.ts builds them with these functions from the operations it mounts, so both sets a gateway can
 * mount are linted (production: no sandbox routes; development with the sandbox drivers: all of them).
 */
/** A deployment's PUBLIC_URL. The development default (localhost) draws `no-server-example.com`, rightly: set PUBLIC_URL. */
const SERVER = 'https://crm.acme.test';
const DEPLOYMENTS = {
  production: servedOperations({ NODE_ENV: 'production', CHATNET_DRIVER: 'zca' }),
  'development with the sandbox drivers': servedOperations({ NODE_ENV: 'development', CHATNET_DRIVER: 'sandbox' }),
};
const DOCUMENTS = Object.entries(DEPLOYMENTS).flatMap(([deployment, ops]) => [
  { deployment, path: '/openapi.json', doc: gatewayDocument(ops, SERVER), operations: ops.length },
  {
    deployment,
    path: '/api/public/openapi.json',
    doc: publicDocument(ops, SERVER),
    operations: ops.filter((o) => o.path.startsWith('/api/public/')).length,
  },
]);

const opsOf = (doc: Record<string, unknown>) =>
  Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, o]) => Object.keys(o).map((m) => `${m.toUpperCase()} ${p}`));

describe('redocly lint (recommended rules) of the documents a gateway serves', () => {
  let problems: ReturnType<typeof redoclyLint>;
  // One linter process for the four documents.
  beforeAll(() => {
    problems = redoclyLint(DOCUMENTS.map((d) => d.doc));
  }, 60_000);

  it.each(DOCUMENTS.map((d, i) => [d.path, d.deployment, i] as const))(
    '%s in %s: no error, no warning, every operation in it',
    (_path, _deployment, i) => {
      expect(problems[i]).toEqual([]);
      expect(opsOf(DOCUMENTS[i].doc)).toHaveLength(DOCUMENTS[i].operations);
    },
  );
});
