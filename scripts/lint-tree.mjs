// `npm run lint:tree` (what `npm test` lints with): ESLint over the whole tree in two processes at once, one per
// core of a CI machine. Linted workspace by workspace, every process built its own TypeScript programs for the
// type-aware rules: three times the CPU of one run over the tree (measured: ~230 s against ~75 s). Turbo caches this
// as one root task (`//#lint:tree`, keyed by every source file, the ESLint and TypeScript configs and the lockfile);
// `npm run lint` still lints workspace by workspace, each cached on its own. Beside ESLint, Prettier checks the
// tree's formatting (`npm run format` fixes it) and tsc type-checks the tests (tsconfig.test.json: the build leaves
// them out, and jest's swc does not check types): the two ESLint halves, the check and tsc run at once.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// Two halves of about the same work (services; packages and tests).
const shards = [['services'], ['packages', 'tests']];
const eslint = path.join(root, 'node_modules', 'eslint', 'bin', 'eslint.js');
const prettier = path.join(root, 'node_modules', 'prettier', 'bin', 'prettier.cjs');
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
/**
 * tsc's incremental state (git-ignored): a run after a change re-checks only what the change can reach (measured: ~8 s
 * of CPU after a test file changed, ~35 s for all; a change to a package every test imports, such as @crm/db, is all).
 */
const TSC_STATE = path.join('.local', 'tsc', 'tsconfig.test.tsbuildinfo');
/** The files Prettier formats (the same glob as `npm run format`; .prettierignore leaves out what is built). */
const FORMATTED = '**/*.{ts,mjs,js,cjs}';

const runNode = (args, name) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.on('error', (err) => {
      console.error(`${name}: ${err.message}`);
      resolve(1);
    });
  });

const codes = await Promise.all([
  ...shards.map((dirs) => runNode([eslint, ...dirs], `eslint ${dirs.join(' ')}`)),
  runNode([prettier, '--check', '--log-level', 'warn', FORMATTED], 'prettier --check'),
  runNode([tsc, '-p', 'tsconfig.test.json', '--incremental', '--tsBuildInfoFile', TSC_STATE], 'tsc -p tsconfig.test.json'),
]);
process.exit(codes.some((c) => c !== 0) ? 1 : 0);
