import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * What the module tests of crm, messaging, automation and the connector check alike: every direct sub-folder of a service's `src` is a
 * module whose `index.ts` is its face. A file may import its own module's files freely, but another module
 * only through that face, type-only imports included. Top-level files (app.ts, deps.ts, ...) are no module.
 */

/** Every TypeScript source under a folder. */
export function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The module a path belongs to (its first folder under `src`), or undefined for a top-level file. */
export function moduleOf(src: string, file: string): string | undefined {
  const parts = path.relative(src, file).split(path.sep);
  return parts.length > 1 ? parts[0] : undefined;
}

/** Every relative import and re-export of a file (static `from '…'`, `import('…')` and `require('…')`). */
export function relativeSpecifiers(text: string): string[] {
  const found = [...text.matchAll(/\bfrom\s+'(\.[^']*)'|\bimport\(\s*'(\.[^']*)'\s*\)|\brequire\(\s*'(\.[^']*)'\s*\)/g)];
  return found.map((m) => m[1] ?? m[2] ?? m[3]);
}

/** "file → target" for every import that reaches into another module past its index. */
export function boundaryViolations(src: string): string[] {
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

/** The direct sub-folders of `src`: its modules. */
export function modulesOf(src: string): string[] {
  return readdirSync(src).filter((name) => statSync(path.join(src, name)).isDirectory());
}

/** Modules without an index.ts. */
export function modulesWithoutFace(src: string): string[] {
  return modulesOf(src).filter((m) => !existsSync(path.join(src, m, 'index.ts')));
}

/** Modules without an index.ts, and the flat folders of unrelated files (domain/, db/) that must not come back. */
export function shapeProblems(src: string): string[] {
  return [
    ...modulesWithoutFace(src).map((m) => `${m}/ has no index.ts`),
    ...modulesOf(src)
      .filter((m) => m === 'domain' || m === 'db')
      .map((m) => `${m}/ is a flat folder, not a module`),
  ];
}

/**
 * A throwaway `src` tree for a check to see its findings on: `write` puts a file in it (folders made as needed);
 * the tree is removed afterwards, whatever the check did.
 */
export function inTempTree(label: string, check: (src: string, write: (rel: string, text: string) => void) => void): void {
  const src = mkdtempSync(path.join(tmpdir(), `${label}-`));
  const write = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(src, rel)), { recursive: true });
    writeFileSync(path.join(src, rel), text);
  };
  try {
    check(src, write);
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
}
