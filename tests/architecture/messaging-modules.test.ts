import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * messaging is built of modules (issue #30 item 1), as crm is (crm-modules.test.ts): every direct sub-folder of
 * services/messaging/src is one (conversations, inbox, send, assignment, attachments, search, notes, ...), and its
 * `index.ts` is its public face. A file may import the files of its own module freely, but another module only
 * through that face (`../send`, never `../send/send`), type-only imports included. The top-level files (app.ts,
 * deps.ts, config.ts, clients.ts, main.ts) are no module and reach modules by their faces too. The flat `domain/`
 * and `db/` folders of unrelated files are gone for good.
 */
const messagingSrc = path.join(__dirname, '..', '..', 'services', 'messaging', 'src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The module a path belongs to (its first folder under `src`), or undefined for a top-level file. */
function moduleOf(src: string, file: string): string | undefined {
  const parts = path.relative(src, file).split(path.sep);
  return parts.length > 1 ? parts[0] : undefined;
}

/** Every relative import and re-export of a file (static `from '…'`, `import('…')` and `require('…')`). */
function relativeSpecifiers(text: string): string[] {
  const found = [...text.matchAll(/\bfrom\s+'(\.[^']*)'|\bimport\(\s*'(\.[^']*)'\s*\)|\brequire\(\s*'(\.[^']*)'\s*\)/g)];
  return found.map((m) => m[1] ?? m[2] ?? m[3]);
}

/** "file → target" for every import that reaches into another module past its index. */
function boundaryViolations(src: string): string[] {
  const out: string[] = [];
  for (const file of sources(src)) {
    const own = moduleOf(src, file);
    for (const spec of relativeSpecifiers(readFileSync(file, 'utf8'))) {
      const target = path.resolve(path.dirname(file), spec);
      if (path.relative(src, target).startsWith('..')) continue; // outside src (packages' tests, fixtures)
      const targetModule = moduleOf(src, target);
      if (!targetModule || targetModule === own) continue;
      // The face itself: the module folder, or its index file named outright.
      const face = path.join(src, targetModule);
      if (target === face || target === path.join(face, 'index') || target === path.join(face, 'index.ts')) continue;
      out.push(`${path.relative(src, file)} → ${spec}`);
    }
  }
  return out;
}

/** Modules without an index.ts, and the flat folders of unrelated files that must not come back. */
function shapeProblems(src: string): string[] {
  const modules = readdirSync(src).filter((name) => statSync(path.join(src, name)).isDirectory());
  return [
    ...modules.filter((m) => !existsSync(path.join(src, m, 'index.ts'))).map((m) => `${m}/ has no index.ts`),
    ...modules.filter((m) => m === 'domain' || m === 'db').map((m) => `${m}/ is a flat folder, not a module`),
  ];
}

describe('messaging modules', () => {
  it('import each other only through their index.ts', () => {
    expect(boundaryViolations(messagingSrc)).toEqual([]);
  });

  it('every module has an index.ts, and no flat domain/ or db/ folder is left', () => {
    expect(shapeProblems(messagingSrc)).toEqual([]);
    const modules = readdirSync(messagingSrc).filter((name) => statSync(path.join(messagingSrc, name)).isDirectory());
    expect(modules).toEqual(
      expect.arrayContaining(['conversations', 'inbox', 'send', 'assignment', 'attachments', 'search', 'notes', 'outreach', 'visibility']),
    );
  });

  it("sees an import past another module's index, a module without one and a flat domain/ folder", () => {
    const src = mkdtempSync(path.join(tmpdir(), 'messaging-modules-'));
    const write = (rel: string, text: string) => {
      mkdirSync(path.dirname(path.join(src, rel)), { recursive: true });
      writeFileSync(path.join(src, rel), text);
    };
    try {
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
    } finally {
      rmSync(src, { recursive: true, force: true });
    }
  });
});
