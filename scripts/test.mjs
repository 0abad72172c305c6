// `npm test`: install what is missing, build, lint, check the infrastructure, run every test once.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { build, checkInfra, checkTreeUnchanged, ensureChromium, ensureInstalled, lint, root, trackedChanges } from './lib.mjs';

const treeBefore = trackedChanges();
ensureInstalled();
ensureChromium();
build();
lint();
// Unreachable infrastructure is fatal unless Docker can start it (jest's globalSetup uses testcontainers then).
await checkInfra({ purpose: 'test' });

const report = path.join(root, '.local', 'jest-report.json');
mkdirSync(path.dirname(report), { recursive: true });
console.log('› Running tests (jest)…');
const args = ['jest', '--ci', '--json', `--outputFile=${report}`, ...process.argv.slice(2)];
const r = spawnSync('npx', args, { stdio: 'inherit', cwd: root });

// One plain closing line that any CI reader understands.
if (existsSync(report)) {
  const j = JSON.parse(readFileSync(report, 'utf8'));
  console.log(`\n${j.numPassedTests} passed, ${j.numFailedTests} failed, ${j.numPendingTests} skipped`);
}
// CI runs exactly this: a run that rewrote a tracked file (package-lock.json, a generated file) fails it.
const clean = checkTreeUnchanged(treeBefore);
process.exit(r.status === 0 && !clean ? 1 : (r.status ?? 1));
