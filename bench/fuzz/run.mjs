// The long fuzz run: tests/gateway/fuzz.test.ts with more requests and several seeds, against the whole stack
// (every service in-process, fresh databases). Each seed's spread of statuses goes into bench/RESULTS.md.
//   FUZZ_REQUESTS (default 5000 per seed), FUZZ_SEEDS (default "1,2"), FUZZ_CONCURRENCY (default 4)
// Needs a build (`npm run build`) and PostgreSQL, RabbitMQ and Redis, like `npm test`.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const requests = Number(process.env.FUZZ_REQUESTS ?? 5000);
const seeds = (process.env.FUZZ_SEEDS ?? '1,2').split(',').map(Number);
const concurrency = process.env.FUZZ_CONCURRENCY ?? '4';

const rows = [];
let failed = false;
for (const seed of seeds) {
  const started = Date.now();
  const r = spawnSync('npx', ['jest', 'tests/gateway/fuzz.test.ts', '--ci'], {
    cwd: root,
    env: { ...process.env, FUZZ_REQUESTS: String(requests), FUZZ_SEED: String(seed), FUZZ_CONCURRENCY: concurrency, FUZZ_REPORT: '1' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const out = `${r.stdout}\n${r.stderr}`;
  const line = out.split('\n').find((l) => l.trim().startsWith('{"seed"'));
  const report = line ? JSON.parse(line.trim()) : { seed, requests, statuses: {}, failures: 'no report' };
  if (r.status !== 0) {
    failed = true;
    console.error(out.slice(-20_000));
  }
  rows.push({ ...report, seconds: Math.round((Date.now() - started) / 1000), passed: r.status === 0 });
  console.log(JSON.stringify(rows.at(-1)));
}

const statusCols = [...new Set(rows.flatMap((x) => Object.keys(x.statuses)))].sort();
const section = [
  '## fuzz',
  '',
  `Command: \`node bench/fuzz/run.mjs\` (FUZZ_REQUESTS=${requests}, FUZZ_SEEDS=${seeds.join(',')}, FUZZ_CONCURRENCY=${concurrency}). Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC.`,
  '',
  'Generated requests to every route of the gateway router (hostile path ids, query values and JSON bodies; owner JWT for /api/v1, API key for /api/public) against all seven services. Pass = no status ≥ 500 and no hang or dropped connection. Wall time includes starting the stack.',
  '',
  `| seed | requests | routes | ${statusCols.join(' | ')} | 5xx | seconds | result |`,
  `|---|---|---|${statusCols.map(() => '---|').join('')}---|---|---|`,
  ...rows.map(
    (x) =>
      `| ${x.seed} | ${x.requests} | ${x.routes ?? '?'} | ${statusCols.map((c) => x.statuses[c] ?? 0).join(' | ')} | ${x.failures} | ${x.seconds} | ${x.passed ? 'pass' : 'FAIL'} |`,
  ),
  '',
].join('\n');

const file = path.join(root, 'bench', 'RESULTS.md');
const text = readFileSync(file, 'utf8');
const start = text.indexOf('\n## fuzz\n');
const rest = start < 0 ? '' : text.slice(start + 1).replace(/^## fuzz\n[\s\S]*?(?=^## |(?![\s\S]))/m, '');
writeFileSync(file, `${(start < 0 ? text : text.slice(0, start + 1)).trimEnd()}\n\n${section}${rest ? `\n${rest}` : ''}`);
process.exit(failed ? 1 : 0);
