// bench/gateway: the authenticated hot path through the gateway against a one-process reference doing the same
// work, measured in the same run with autocannon (50 connections):
// - GET /api/v1/contacts/:id: gateway → gRPC → crm → PostgreSQL (the contact and its notes, friends, appointments,
//   activities); messaging is not started, so crm answers without conversations, as the reference does;
// - GET /api/v1/profile: gateway → gRPC → identity → PostgreSQL.
// Usage: npm run bench:gateway   (writes its run on top of the "## gateway" section of bench/RESULTS.md)
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { autocannon } from '../lib/autocannon.mjs';
import { waitReady } from '../lib/processes.mjs';
import { writeResultsSection } from '../lib/results.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 50;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const pgBase = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `bench_identity_${Date.now()}`;
const dbUrl = Object.assign(new URL(pgBase), { pathname: `/${dbName}` }).toString();
const crmDbName = `bench_crm_${Date.now()}`;
const crmDbUrl = Object.assign(new URL(pgBase), { pathname: `/${crmDbName}` }).toString();
const secret = randomBytes(32).toString('hex');
const prefix = `bench${Date.now()}:`;
const exchange = `bench_gateway_${Date.now()}`;
const procs = [];
// BENCH_CPU_PROF=<dir>: write V8 CPU profiles of the gateway and identity there (open it in Chrome DevTools).
const gatewayNodeArgs = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];

function start(file, env, readyText, nodeArgs = []) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...nodeArgs, file], {
      cwd: root,
      env: { ...process.env, METRICS_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    procs.push(p);
    let out = '';
    const onData = (d) => {
      out += d;
      if (out.includes(readyText)) resolve(p);
    };
    p.stdout.on('data', onData);
    p.stderr.on('data', (d) => (out += d));
    p.on('exit', (code) => reject(new Error(`${file} exited ${code}: ${out.slice(-2000)}`)));
  });
}

const measure = async (url, token) => {
  const r = await autocannon(url, token, ['-c', String(CONNECTIONS), '-d', String(DURATION)]);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  const env = {
    DATABASE_URL: dbUrl,
    JWT_SECRET: secret,
    INTERNAL_AUTH_SEED: randomBytes(32).toString('hex'),
    REDIS_PREFIX: prefix,
    EVENTS_EXCHANGE: exchange,
    SIGNUP_ENABLED: 'true',
    LOG_LEVEL: 'info',
    RATE_LIMIT_USER_PER_MINUTE: '100000000',
    RATE_LIMIT_AUTH_PER_MINUTE: '1000',
  };
  await start('services/identity/dist/main.js', { ...env, GRPC_PORT: '50951' }, 'identity listening', gatewayNodeArgs).catch(async (e) => {
    throw e;
  });
  // No messaging: crm's detail omits conversations after a refused connection (fast), like the reference.
  // Its start is awaited through the gateway's /readyz below: at log level error it prints no "listening" line.
  start(
    'services/crm/dist/main.js',
    {
      ...env,
      DATABASE_URL: crmDbUrl,
      GRPC_PORT: '50952',
      MESSAGING_ADDR: '127.0.0.1:50953',
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'error',
    },
    'never printed',
    gatewayNodeArgs,
  ).catch((e) => console.error(e.message));
  await start(
    'services/gateway/dist/main.js',
    { ...env, PORT: '18080', IDENTITY_ADDR: '127.0.0.1:50951', CRM_ADDR: '127.0.0.1:50952', SERVICES: 'identity,crm', LOG_LEVEL: 'info' },
    'gateway listening',
    gatewayNodeArgs,
  );
  await start('bench/gateway/reference.mjs', { DATABASE_URL: dbUrl, CRM_DATABASE_URL: crmDbUrl, JWT_SECRET: secret, PORT: '18081' }, 'ready');
  await waitReady('http://127.0.0.1:18080');

  const signup = await fetch('http://127.0.0.1:18080/api/v1/auth/signup', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ orgName: 'Bench', fullName: 'Bench Owner', email: `bench${Date.now()}@example.test`, password: 'bench password 1' }),
  }).then((r) => r.json());
  const token = signup.token;
  const contact = await fetch('http://127.0.0.1:18080/api/v1/contacts', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: 'Nguyễn Văn An', phone: '+84901234567', email: 'an@example.test', tags: ['vip'] }),
  }).then((r) => r.json());
  if (!contact.id) throw new Error(`contact not created: ${JSON.stringify(contact)}`);
  const paths = { contact: `/api/v1/contacts/${contact.id}`, profile: '/api/v1/profile' };

  const results = {};
  for (const [name, p] of Object.entries(paths)) {
    const gwUrl = `http://127.0.0.1:18080${p}`;
    const refUrl = `http://127.0.0.1:18081${p}`;
    results[name] = { gateway: [], reference: [] };
    // Warm-up, then alternate so drift on a busy machine hits both equally.
    await measure(refUrl, token);
    await measure(gwUrl, token);
    for (let i = 0; i < ROUNDS; i++) {
      results[name].reference.push(await measure(refUrl, token));
      results[name].gateway.push(await measure(gwUrl, token));
    }
  }
  const summary = (rs) => ({ rps: median(rs.map((r) => r.rps)), p50: median(rs.map((r) => r.p50)), p99: median(rs.map((r) => r.p99)) });
  const rows = [];
  const verdicts = [];
  for (const [name, label, refLabel] of [
    [
      'contact',
      'GET /api/v1/contacts/:id: gateway → gRPC → crm → PostgreSQL',
      'reference: one process, express + JWT verify + the same contact SELECTs',
    ],
    [
      'profile',
      'GET /api/v1/profile: gateway → gRPC → identity → PostgreSQL',
      'reference: one process, express + JWT verify (KeyObject) + SELECT by key',
    ],
  ]) {
    const gw = summary(results[name].gateway);
    const ref = summary(results[name].reference);
    const ratio = gw.rps / ref.rps;
    rows.push(`| ${label} | ${gw.rps.toFixed(0)} | ${gw.p50} | ${gw.p99} |`, `| ${refLabel} | ${ref.rps.toFixed(0)} | ${ref.p50} | ${ref.p99} |`);
    verdicts.push(
      `${paths[name].replace(contact.id, ':id')}: **${(ratio * 100).toFixed(0)}%** of the reference's req/s (target ≥ 50%, p99 < 50 ms at 50 connections: ${ratio >= 0.5 && gw.p99 < 50 ? 'met' : 'NOT met'}).`,
    );
  }
  const section = [
    '## gateway',
    '',
    `Command: \`npm run bench:gateway\` (autocannon, ${CONNECTIONS} connections, ${DURATION} s per run, median of ${ROUNDS} alternating runs after a warm-up; load generator on the same 2 cores). Measured ${new Date().toISOString().slice(0, 10)}.`,
    '',
    '| path | req/s | p50 ms | p99 ms |',
    '|---|---|---|---|',
    ...rows,
    '',
    ...verdicts.map((v) => `- ${v}`),
    '',
  ].join('\n');
  // On top of the section, earlier runs and their notes kept below (replacing the section lost them).
  writeResultsSection(path.join(root, 'bench', 'RESULTS.md'), 'gateway', section, { keepEarlier: true });
  console.log(section);
} finally {
  for (const p of procs) p.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 1500));
  const c = new pg.Client({ connectionString: pgBase });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  await c.query(`DROP DATABASE IF EXISTS "${crmDbName}" WITH (FORCE)`);
  await c.end();
  // Leave nothing on the shared servers: the gateway's queue and exchange, and this run's Redis keys.
  const { deleteRabbitPrefix, clearRedisPrefix } = await import('@crm/testing');
  await deleteRabbitPrefix(process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672', exchange);
  await clearRedisPrefix(prefix);
}
