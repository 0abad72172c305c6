import path from 'node:path';
import { boundaryViolations, inTempTree, modulesOf, modulesWithoutFace } from './module-faces';

/**
 * crm is built of modules (issue #14): every direct sub-folder of services/crm/src is one (contacts, scoring,
 * analytics, reports, integrations, shared, ...), and its `index.ts` is its public face. A file may import the
 * files of its own module freely, but another module only through that face (`../scoring`, never
 * `../scoring/engine`), so a module's inside can change without its neighbours noticing. The top-level files
 * (app.ts, deps.ts, ...) are no module; importing them is allowed, and they too reach modules only by their index.
 * Type-only imports count as well: a type from another module's inside ties the two together just the same.
 */
const crmSrc = path.join(__dirname, '..', '..', 'services', 'crm', 'src');

describe('crm modules', () => {
  it('import each other only through their index.ts', () => {
    expect(boundaryViolations(crmSrc)).toEqual([]);
  });

  it('every module has an index.ts', () => {
    expect(modulesWithoutFace(crmSrc)).toEqual([]);
    expect(modulesOf(crmSrc)).toEqual(expect.arrayContaining(['contacts', 'scoring', 'analytics', 'reports', 'integrations', 'shared']));
  });

  it("sees an import past another module's index, and allows its own files, faces and top-level files", () => {
    inTempTree('crm-modules', (src, write) => {
      write('deps.ts', "import type { Row } from './a';\nexport type Deps = Row;\n");
      write('app.ts', "import { a } from './a';\nimport { inner } from './a/inner';\n");
      write('a/index.ts', "export { inner as a } from './inner';\nexport type { Row } from './db/row';\n");
      write('a/inner.ts', "import type { Deps } from '../deps';\nexport const inner = 1;\n");
      write('a/db/row.ts', "import { b } from '../../b';\nexport type Row = { b: typeof b };\n");
      write('b/index.ts', "export { b } from './b';\n");
      write('b/b.ts', "import type { Row } from '../a/db/row';\nimport { a } from '../a/index';\nexport const b = () => import('../a/inner');\n");
      expect(boundaryViolations(src).sort()).toEqual(['app.ts → ./a/inner', 'b/b.ts → ../a/db/row', 'b/b.ts → ../a/inner'].sort());
    });
  });
});
