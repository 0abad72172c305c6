import { readFileSync } from 'node:fs';
import path from 'node:path';
import { boundaryViolations, inTempTree, modulesOf, relativeSpecifiers, shapeProblems, sources } from './module-faces';

/**
 * The chat-network connector is built of modules (issue #30 item 1), as crm and messaging are: every direct sub-folder
 * of services/chatnet-connector/src is one (accounts, account-store, lookup, friend-requests, messages, pool, drivers,
 * zca, ...), and its `index.ts` is its public face. A file may import the files of its own module freely, but another
 * module only through that face (`../accounts`, never `../accounts/accounts`), type-only imports included. The
 * top-level files (app.ts, deps.ts, config.ts, main.ts, redis.ts, secrets.ts) are no module and reach modules by their
 * faces too. The flat `domain/` and `db/` folders of unrelated files are gone for good.
 *
 * Two faces exist for what they keep from loading: config.ts is loaded before tracing starts (main.ts), so the only
 * module it imports is media-hosts, which loads nothing; and zca/ (zca-js, a sixth of what a service loads) is reached
 * only by app.ts's lazy require when CHATNET_DRIVER=zca, never by a static import.
 */
const connectorSrc = path.join(__dirname, '..', '..', 'services', 'chatnet-connector', 'src');

/** Imports that would load more than they should: config.ts's modules other than media-hosts, and zca/ loaded eagerly. */
function loadProblems(src: string): string[] {
  const out: string[] = [];
  const config = path.join(src, 'config.ts');
  for (const spec of relativeSpecifiers(readFileSync(config, 'utf8'))) {
    if (spec !== './media-hosts') out.push(`config.ts → ${spec}`);
  }
  const zca = path.join(src, 'zca');
  for (const file of sources(src)) {
    if (file.startsWith(zca + path.sep)) continue;
    // A static import or re-export that is not type-only (erased at build, so it loads nothing).
    for (const m of readFileSync(file, 'utf8').matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+'(\.[^']*)'/gm)) {
      if (path.resolve(path.dirname(file), m[1]) === zca) out.push(`${path.relative(src, file)} → ${m[1]}`);
    }
  }
  return out;
}

describe('chat-network connector modules', () => {
  it('import each other only through their index.ts', () => {
    expect(boundaryViolations(connectorSrc)).toEqual([]);
  });

  it('every module has an index.ts, and no flat domain/ or db/ folder is left', () => {
    expect(shapeProblems(connectorSrc)).toEqual([]);
    expect(modulesOf(connectorSrc)).toEqual(
      expect.arrayContaining([
        'accounts',
        'account-store',
        'lookup',
        'friend-requests',
        'messages',
        'sandbox-control',
        'pool',
        'drivers',
        'zca',
        'events',
        'files',
        'grpc',
        'sandbox-network',
      ]),
    );
  });

  it('config.ts loads no module but media-hosts, and zca/ is loaded only lazily', () => {
    expect(loadProblems(connectorSrc)).toEqual([]);
  });

  it('sees config.ts loading a module, a static import of zca/, and a flat db/ folder', () => {
    inTempTree('connector-modules', (src, write) => {
      write('config.ts', "import { parseMediaHosts } from './media-hosts';\nimport { SandboxDriver } from './drivers';\n");
      write('media-hosts/index.ts', 'export const parseMediaHosts = 1;\n');
      write('drivers/index.ts', 'export const SandboxDriver = 1;\n');
      write('app.ts', "import type { ZcaDriver } from './zca';\nimport { ZcaDriver as Eager } from './zca';\nconst lazy = () => require('./zca');\n");
      write('zca/index.ts', "export { ZcaDriver } from './zca.driver';\n");
      write('zca/zca.driver.ts', "import { SandboxDriver } from '../drivers';\nexport class ZcaDriver {}\n");
      write('db/accounts.repo.ts', 'export const getAccount = 1;\n');
      expect(loadProblems(src)).toEqual(['config.ts → ./drivers', 'app.ts → ./zca']);
      expect(shapeProblems(src)).toEqual(['db/ has no index.ts', 'db/ is a flat folder, not a module']);
    });
  });
});
