import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * No module of a service or package imports itself back through others at run time (issue #14): a circle makes
 * the order modules load in decide whether a value is there yet. `import type` is erased at build and does not
 * count. Imports between workspaces go through their package names and are not followed here.
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

/** The relative modules a file imports for their values (`import type …` and `import { type A, type B }` skipped). */
function runtimeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?([^'"]*?)\s*from\s+'(\.[^']+)'/gm)) {
    const [, typeOnly, clause, spec] = m;
    if (typeOnly) continue;
    const names = /^\{([^}]*)\}$/.exec(clause.trim())?.[1];
    if (names !== undefined && names.split(',').every((n) => !n.trim() || n.trim().startsWith('type '))) continue;
    const target = path.resolve(path.dirname(file), spec);
    const resolved = [`${target}.ts`, path.join(target, 'index.ts')].find((p) => existsSync(p));
    if (resolved) out.push(resolved);
  }
  return out;
}

function cycles(files: string[]): string[][] {
  const graph = new Map(files.map((f) => [f, runtimeImports(f)]));
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

describe('runtime import circles', () => {
  it.each(sourceRoots.map((dir) => [path.relative(root, dir), dir]))('%s has none', (_name, dir) => {
    expect(cycles(sources(dir))).toEqual([]);
  });

  it('sees a circle of value imports, and not one closed only by a type import', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'import-cycles-'));
    try {
      writeFileSync(path.join(dir, 'a.ts'), "import { b } from './b';\nexport const a = () => b;\n");
      writeFileSync(path.join(dir, 'b.ts'), "import { a } from './a';\nexport const b = () => a;\n");
      writeFileSync(path.join(dir, 'c.ts'), "import { d } from './d';\nexport const c = () => d;\n");
      writeFileSync(path.join(dir, 'd.ts'), "import type { C } from './e';\nimport { type c } from './c';\nexport const d = 1;\n");
      writeFileSync(path.join(dir, 'e.ts'), "export type C = number;\n");
      expect(cycles(sources(dir)).map((c) => c.map((p) => path.basename(p)).sort())).toEqual([['a.ts', 'b.ts']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
