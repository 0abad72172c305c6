// `npm test`: install what is missing, build, check the infrastructure, run every test once.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { build, checkInfra, ensureChromium, ensureInstalled, root } from './lib.mjs';

ensureInstalled();
ensureChromium();
build();
// Unreachable infrastructure is fatal unless Docker can start it (jest's globalSetup uses testcontainers then).
await checkInfra({ dockerFallback: true });

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
process.exit(r.status ?? 1);
