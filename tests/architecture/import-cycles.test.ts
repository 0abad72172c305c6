import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * No module of a service or package imports itself back through others (issues #14 and #30). At run time a circle
 * makes the order modules load in decide whether a value is there yet. Type-only imports count too (`import type`,
 * `import { type A }`, `export type … from`): they are erased at build, but they tie the files together just the
 * same, and one value import added beside them turns the circle into a run-time one. A shared type goes into a
 * small file both sides import. Lazy loads (`import('./x')`, a `require` inside a function) are left out: they are
 * how a circle is deliberately deferred. Imports between workspaces go through their package names and are not
 * followed here.
 */
const root = path.join(__dirname, '..', '..');
const sourceRoots = ['services', 'packages'].flatMap((top) =>
  readdirSync(path.join(root, top))
    .map((name) => path.join(root, top, name, 'src'))
    .filter((dir) => existsSync(dir)),
);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The relative modules a file imports or re-exports from, types included, and those it imports for their effect only. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s+[^'"]*?\s*from\s+'(\.[^']+)'|^import\s+'(\.[^']+)'/gm)) {
    const target = path.resolve(path.dirname(file), m[1] ?? m[2]);
    const resolved = [`${target}.ts`, path.join(target, 'index.ts')].find((p) => existsSync(p));
    // A file naming itself is a recursive type (the generated proto type of an `if` action holds actions), not a circle.
    if (resolved && resolved !== file) out.push(resolved);
  }
  return out;
}

function cycles(files: string[]): string[][] {
  const graph = new Map(files.map((f) => [f, imports(f)]));
  const found: string[][] = [];
  const done = new Set<string>();
  const stack: string[] = [];
  const visit = (f: string) => {
    const at = stack.indexOf(f);
    if (at >= 0) {
      found.push(stack.slice(at).map((p) => path.relative(root, p)));
      return;
    }
    if (done.has(f)) return;
    stack.push(f);
    for (const g of graph.get(f) ?? []) visit(g);
    stack.pop();
    done.add(f);
  };
  for (const f of files) visit(f);
  return found;
}

describe('import circles', () => {
  it.each(sourceRoots.map((dir) => [path.relative(root, dir), dir]))('%s has none', (_name, dir) => {
    expect(cycles(sources(dir))).toEqual([]);
  });

  it('sees a circle of value imports, of type-only imports and re-exports, and of an import for effect', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'import-cycles-'));
    const write = (name: string, text: string) => writeFileSync(path.join(dir, name), text);
    try {
      write('a.ts', "import { b } from './b';\nexport const a = () => b;\n");
      write('b.ts', "import { a } from './a';\nexport const b = () => a;\n");
      write('c.ts', "import type { D } from './d';\nexport interface C {\n  d: D[];\n}\n");
      write('d.ts', "import {\n  type C,\n} from './c';\nexport interface D {\n  c?: C;\n}\n");
      write('e.ts', "export type { F } from './f';\nexport type E = string;\n");
      write('f.ts', "import type { E } from './e';\nexport type F = E[];\n");
      write('g.ts', "import './h';\nexport const g = 1;\n");
      write('h.ts', "import { g } from './g';\nexport const h = g;\n");
      // No circle: imports that only go one way, one of them through a folder's index.
      write('i.ts', "import type { J } from './j';\nimport { k } from './k';\nexport const i = (j: J) => k(j);\n");
      write('j.ts', 'export type J = number;\n');
      mkdirSync(path.join(dir, 'k'));
      write('k/index.ts', "import type { J } from '../j';\nexport const k = (j: J) => j;\n");
      const found = cycles(sources(dir)).map((c) => c.map((p) => path.basename(p)).sort());
      expect(found.sort()).toEqual([
        ['a.ts', 'b.ts'],
        ['c.ts', 'd.ts'],
        ['e.ts', 'f.ts'],
        ['g.ts', 'h.ts'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
