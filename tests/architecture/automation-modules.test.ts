import path from 'node:path';
import { boundaryViolations, inTempTree, modulesOf, shapeProblems } from './module-faces';

/**
 * automation is built of modules (issue #30 item 1), as crm and messaging are: every direct sub-folder of
 * services/automation/src is one (rule-definitions, rules, campaigns, templates, notifications, ...), and its
 * `index.ts` is its public face. A file may import the files of its own module freely, but another module only
 * through that face (`../rules`, never `../rules/runner`), type-only imports included. The top-level files (app.ts,
 * deps.ts, config.ts, remote.ts, secrets.ts, main.ts) are no module and reach modules by their faces too. The flat
 * `domain/` and `db/` folders of unrelated files are gone for good.
 */
const automationSrc = path.join(__dirname, '..', '..', 'services', 'automation', 'src');

describe('automation modules', () => {
  it('import each other only through their index.ts', () => {
    expect(boundaryViolations(automationSrc)).toEqual([]);
  });

  it('every module has an index.ts, and no flat domain/ or db/ folder is left', () => {
    expect(shapeProblems(automationSrc)).toEqual([]);
    expect(modulesOf(automationSrc)).toEqual(
      expect.arrayContaining(['rule-definitions', 'rules', 'campaigns', 'templates', 'notifications', 'appointment-reminders', 'contact-merges']),
    );
  });

  it("sees an import past another module's index, a module without one and a flat db/ folder", () => {
    inTempTree('automation-modules', (src, write) => {
      write('deps.ts', "import type { RuleCache } from './rule-definitions';\nimport type { Cache } from './rule-definitions/rule-cache';\n");
      write('rule-definitions/index.ts', "export { RuleCache } from './rule-cache';\n");
      write('rule-definitions/rule-cache.ts', 'export class RuleCache {}\n');
      write('rules/index.ts', "export * as rules from './rules';\n");
      write('rules/rules.ts', "import { RuleCache } from '../rule-definitions/index';\nimport type { Row } from '../campaigns/email/row';\n");
      write('campaigns/index.ts', "export { send } from './send';\n");
      write('campaigns/send.ts', "export const send = () => import('../rules/rules');\n");
      write('campaigns/email/row.ts', 'export type Row = { id: string };\n');
      write('db/rules.repo.ts', "import { pool } from '../../elsewhere/pool';\n");
      expect(boundaryViolations(src).sort()).toEqual(
        ['deps.ts → ./rule-definitions/rule-cache', 'rules/rules.ts → ../campaigns/email/row', 'campaigns/send.ts → ../rules/rules'].sort(),
      );
      expect(shapeProblems(src)).toEqual(['db/ has no index.ts', 'db/ is a flat folder, not a module']);
    });
  });
});
