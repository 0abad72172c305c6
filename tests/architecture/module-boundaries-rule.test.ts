import path from 'node:path';
import { RuleTester, type Rule } from 'eslint';
import tseslint from 'typescript-eslint';

/**
 * The local ESLint rule behind "crm modules import each other only through their index.ts" (issue #14):
 * every direct sub-folder of a root is a module, another module is reached through its index only, and the
 * root's top-level files (app.ts, deps.ts…) wire everything. RuleTester runs each case as a jest test.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the rule is CommonJS so eslint.config.mjs and jest both load it
const rule = require('../../eslint/rules/module-boundaries.cjs') as Rule.RuleModule;

const root = path.join(process.cwd(), 'fixture-service', 'src');
const file = (rel: string) => path.join(root, rel);
const options = [{ roots: [root] }];
const tester = new RuleTester({ languageOptions: { parser: tseslint.parser, sourceType: 'module' } });

tester.run('module-boundaries', rule, {
  valid: [
    // Another module through its index, spelled every way.
    { filename: file('contacts/contacts.service.ts'), code: "import { x } from '../notes';", options },
    { filename: file('contacts/contacts.service.ts'), code: "import { x } from '../notes/index';", options },
    { filename: file('contacts/contacts.service.ts'), code: "import { x } from '../notes/index.js';", options },
    { filename: file('contacts/deep/er.ts'), code: "export * from '../../notes';", options },
    // Inside one's own module, any depth.
    { filename: file('contacts/contacts.service.ts'), code: "import { r } from './db/contacts.repo';", options },
    { filename: file('contacts/db/contacts.repo.ts'), code: "import { s } from '../contacts.service';", options },
    // Top-level files: the composition root may reach into any module, and modules may use them.
    { filename: file('app.ts'), code: "import { repo } from './notes/notes.repo';", options },
    { filename: file('contacts/contacts.service.ts'), code: "import type { Deps } from '../deps';", options },
    // Packages, built-ins, and files outside the root are not this rule's business.
    { filename: file('contacts/a.ts'), code: "import { Pool } from 'pg'; import fs from 'node:fs';", options },
    { filename: file('contacts/a.ts'), code: "import { helper } from '../../test/helper';", options },
    // A file outside every root is not checked at all.
    { filename: path.join(process.cwd(), 'elsewhere', 'x', 'y.ts'), code: "import { z } from '../q/internal';", options },
  ],
  invalid: [
    {
      filename: file('contacts/contacts.service.ts'),
      code: "import { repo } from '../notes/notes.repo';",
      options,
      errors: [{ messageId: 'throughIndex', data: { from: 'contacts', to: 'notes', source: '../notes/notes.repo', door: '../notes' } }],
    },
    {
      // Type-only imports count: a module's index is its whole public surface, types included.
      filename: file('contacts/deep/er.ts'),
      code: "import type { Note } from '../../notes/model';",
      options,
      errors: [{ messageId: 'throughIndex', data: { from: 'contacts', to: 'notes', source: '../../notes/model', door: '../../notes' } }],
    },
    {
      filename: file('contacts/a.ts'),
      code: [
        "export { n } from '../notes/x';",
        "export * from '../notes/y';",
        "const m = import('../notes/z');",
        "const r = require('../notes/w');",
        "type T = typeof import('../notes/v');",
        "import q = require('../notes/u');",
      ].join('\n'),
      options,
      errors: 6,
    },
    {
      // A sub-folder's index is still the module's inside, not its door.
      filename: file('contacts/a.ts'),
      code: "import { s } from '../notes/db';",
      options,
      errors: [{ messageId: 'throughIndex', data: { from: 'contacts', to: 'notes', source: '../notes/db', door: '../notes' } }],
    },
    {
      // Relative roots are taken from the working directory.
      filename: file('contacts/a.ts'),
      code: "import { s } from '../notes/notes.repo';",
      options: [{ roots: [path.relative(process.cwd(), root)] }],
      errors: 1,
    },
  ],
});
