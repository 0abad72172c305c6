import path from 'node:path';
import { boundaryViolations, inTempTree, modulesOf, shapeProblems } from './module-faces';

/**
 * messaging is built of modules (issue #30 item 1), as crm is (crm-modules.test.ts): every direct sub-folder of
 * services/messaging/src is one (conversations, inbox, send, assignment, attachments, search, notes, ...), and its
 * `index.ts` is its public face. A file may import the files of its own module freely, but another module only
 * through that face (`../send`, never `../send/send`), type-only imports included. The top-level files (app.ts,
 * deps.ts, config.ts, clients.ts, main.ts) are no module and reach modules by their faces too. The flat `domain/`
 * and `db/` folders of unrelated files are gone for good.
 */
const messagingSrc = path.join(__dirname, '..', '..', 'services', 'messaging', 'src');

describe('messaging modules', () => {
  it('import each other only through their index.ts', () => {
    expect(boundaryViolations(messagingSrc)).toEqual([]);
  });

  it('every module has an index.ts, and no flat domain/ or db/ folder is left', () => {
    expect(shapeProblems(messagingSrc)).toEqual([]);
    expect(modulesOf(messagingSrc)).toEqual(
      expect.arrayContaining(['conversations', 'inbox', 'send', 'assignment', 'attachments', 'search', 'notes', 'outreach', 'visibility']),
    );
  });

  it("sees an import past another module's index, a module without one and a flat domain/ folder", () => {
    inTempTree('messaging-modules', (src, write) => {
      write('app.ts', "import { send } from './send';\nimport { inner } from './send/send';\n");
      write('send/index.ts', "export { send } from './send';\n");
      write(
        'send/send.ts',
        "import { convs } from '../conversations';\nimport type { Row } from '../conversations/db/row';\nexport const send = 1;\n",
      );
      write('conversations/index.ts', "export * as convs from './conversations.repo';\n");
      write('conversations/conversations.repo.ts', "import { send } from '../send/index';\nexport const a = () => import('../send/send');\n");
      write('conversations/db/row.ts', 'export type Row = { id: string };\n');
      write('domain/loose.ts', "import { helper } from '../../elsewhere/helper';\n");
      expect(boundaryViolations(src).sort()).toEqual(
        ['app.ts → ./send/send', 'send/send.ts → ../conversations/db/row', 'conversations/conversations.repo.ts → ../send/send'].sort(),
      );
      expect(shapeProblems(src)).toEqual(['domain/ has no index.ts', 'domain/ is a flat folder, not a module']);
    });
  });
});
