// bench/gateway/cpu.mjs: CPU per request of the gateway's authenticated reads, at a fixed offered rate, so the figure
// does not depend on how fast the machine runs today. One stack (identity, crm, gateway) per checkout given with
// --tree, all on the same databases and Redis prefix; bursts of GET /api/v1/contacts/:id and GET /api/v1/profile go
// to each stack in turn, and each burst reports the CPU its gateway, its backend service and the PostgreSQL backends
// used per request (from /proc). An A/B between commits: `git worktree add /work/wt/base <commit>`, build it, then
// `node bench/gateway/cpu.mjs --tree . --tree /work/wt/base`.
//
// A tree may carry node options for its stack's processes after a `#`: `--tree '.#--max-semi-space-size=32'`.
// Two trees at most with PostgreSQL's default max_connections (100): each stack's crm opens a pool of 30.
//
// --paths picks what is measured (default contacts/:id,profile). Three more isolate the gateway's own share, since
// they end in the gateway: healthz (GET /healthz: node's HTTP in and out, no credential), no-route (an authenticated
// GET of a route that does not exist: 404 after the middleware and the bearer check) and invalid (GET
// /api/v1/contacts?limit=abc: 400 from the route's validation, before any call). A read's gateway figure minus
// invalid's is what its gRPC call and answer cost the gateway.
//
// Usage: node bench/gateway/cpu.mjs [--tree <checkout>[#<node options>]]… [--rate 600] [--seconds 8] [--rounds 3]
//   [--paths healthz,no-route,invalid,profile,contacts/:id]
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { autocannon } from '../lib/autocannon.mjs';
import { cpuPerUnit, cpuSnapshot } from '../lib/cpu.mjs';
import { freePort, root, waitReady } from '../lib/processes.mjs';

const { values: args } = parseArgs({
  options: {
    tree: { type: 'string', multiple: true, default: [root] },
    rate: { type: 'string', default: '600' },
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    paths: { type: 'string', default: 'contacts/:id,profile' },
  },
});
const trees = args.tree.map((t) => {
  const [dir, options = ''] = t.split('#');
  return { dir: path.resolve(dir), nodeArgs: options.split(' ').filter(Boolean) };
});
const pgBase = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const run = Date.now().toString(36);
const dbUrl = (name) => Object.assign(new URL(pgBase), { pathname: `/bench_${name}_${run}` }).toString();
const prefix = `bench${run}:`;
const exchange = `bench_gwcpu_${run}`;
const env = {
  JWT_SECRET: randomBytes(32).toString('hex'),
  INTERNAL_AUTH_SEED: randomBytes(32).toString('hex'),
  ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  REDIS_PREFIX: prefix,
  EVENTS_EXCHANGE: exchange,
  SIGNUP_ENABLED: 'true',
  LOG_LEVEL: 'error',
  METRICS_PORT: '0',
  RATE_LIMIT_USER_PER_MINUTE: '100000000',
};
const children = [];

function launch({ dir, nodeArgs }, service, extra) {
  const child = spawn(process.execPath, [...nodeArgs, path.join(dir, 'services', service, 'dist', 'main.js')], {
    cwd: dir,
    env: { ...process.env, ...env, ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Logs (errors only) to our stderr, with the service's name in front.
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (d) => process.stderr.write(`[${service}] ${d}`));
  children.push(child);
  return child;
}

async function startStack(tree) {
  const [identityPort, crmPort, port] = [await freePort(), await freePort(), await freePort()];
  const identity = launch(tree, 'identity', { DATABASE_URL: dbUrl('identity'), GRPC_PORT: String(identityPort) });
  // No messaging: crm's contact detail omits conversations after a refused connection, as bench/gateway does.
  const crm = launch(tree, 'crm', { DATABASE_URL: dbUrl('crm'), GRPC_PORT: String(crmPort), MESSAGING_ADDR: `127.0.0.1:${await freePort()}` });
  const gateway = launch(tree, 'gateway', {
    PORT: String(port),
    IDENTITY_ADDR: `127.0.0.1:${identityPort}`,
    CRM_ADDR: `127.0.0.1:${crmPort}`,
    SERVICES: 'identity,crm',
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(url);
  // The checkout's commit, marked when its tracked files differ from it, and the node options given.
  const git = (...a) =>
    execFileSync('git', ['-C', tree.dir, ...a])
      .toString()
      .trim();
  const dirty = git('status', '--porcelain', '--untracked-files=no') ? '+changes' : '';
  const commit = `${git('rev-parse', '--short', 'HEAD')}${dirty}${tree.nodeArgs.length ? ` ${tree.nodeArgs.join(' ')}` : ''}`;
  return { commit, url, pids: { gateway: gateway.pid, identity: identity.pid, crm: crm.pid } };
}

const admin = new pg.Pool({ connectionString: pgBase, max: 2 });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  await admin.query(`CREATE DATABASE bench_identity_${run}`);
  await admin.query(`CREATE DATABASE bench_crm_${run}`);
  const stacks = [];
  // One at a time: the first migrates the databases.
  for (const tree of trees) stacks.push(await startStack(tree));
  const signup = await fetch(`${stacks[0].url}/api/v1/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ orgName: 'Bench', fullName: 'Bench Owner', email: `bench.${run}@example.test`, password: 'bench password 1' }),
  }).then((r) => r.json());
  const token = signup.token;
  const contact = await fetch(`${stacks[0].url}/api/v1/contacts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: 'Nguyễn Văn An', phone: '+84901234567', email: 'an@example.test', tags: ['vip'] }),
  }).then((r) => r.json());
  if (!contact.id) throw new Error(`contact not created: ${JSON.stringify(contact)}`);
  // [label, path, the service it calls (none: answered by the gateway), the status it must answer]
  const known = [
    ['healthz', '/healthz', undefined, 200],
    ['no-route', '/api/v1/no-such-route', undefined, 404],
    ['invalid', '/api/v1/contacts?limit=abc', undefined, 400],
    ['contacts/:id', `/api/v1/contacts/${contact.id}`, 'crm', 200],
    ['profile', '/api/v1/profile', 'identity', 200],
  ];
  const paths = args.paths.split(',').map((label) => {
    const found = known.find(([l]) => l === label);
    if (!found) throw new Error(`--paths: unknown path ${label}; known: ${known.map(([l]) => l).join(', ')}`);
    return found;
  });
  const results = new Map();
  for (let round = 0; round <= Number(args.rounds); round++) {
    for (const [label, p, backend, status] of paths) {
      for (const stack of stacks) {
        const snapshot = () =>
          cpuSnapshot({
            processes: { gateway: stack.pids.gateway, ...(backend ? { [backend]: stack.pids[backend] } : {}) },
            dbs: backend ? { [backend]: `bench_${backend}_${run}` } : {},
            pool: admin,
            shared: false,
          });
        const before = await snapshot();
        const result = await autocannon(
          `${stack.url}${p}`,
          token,
          ['-c', '20', '-R', args.rate, '-d', args.seconds],
          status === 200 ? undefined : status,
        );
        const r = { requests: result.requests.total, p99: result.latency.p99 };
        const ms = cpuPerUnit(before, await snapshot(), r.requests);
        const us = (name) => (ms[name] ?? NaN) * 1000;
        // Round 0 warms every stack up (JIT, pools, caches) and is not counted.
        if (round === 0) continue;
        const key = `${label} ${stack.commit}`;
        if (!results.has(key)) results.set(key, { gateway: [], backend: [], pg: [], p99: [], backendName: backend });
        const acc = results.get(key);
        acc.gateway.push(us('gateway'));
        acc.backend.push(us(backend));
        acc.pg.push(us(`pg ${backend}`));
        acc.p99.push(r.p99);
        const behind = backend ? `, ${backend} ${us(backend).toFixed(0)} µs, pg ${us(`pg ${backend}`).toFixed(0)} µs` : '';
        console.error(`round ${round} ${key}: gateway ${us('gateway').toFixed(0)} µs${behind} (${r.requests} requests, p99 ${r.p99} ms)`);
      }
    }
  }
  console.log(`\nCPU per request at ${args.rate} req/s offered (20 connections, ${args.seconds} s bursts), median of ${args.rounds} rounds:`);
  console.log('| path @ commit | gateway µs | service µs | PostgreSQL µs | p99 ms |');
  console.log('|---|---|---|---|---|');
  for (const [key, acc] of results) {
    console.log(
      acc.backendName
        ? `| ${key} | ${median(acc.gateway).toFixed(0)} | ${median(acc.backend).toFixed(0)} (${acc.backendName}) | ${median(acc.pg).toFixed(0)} | ${median(acc.p99)} |`
        : `| ${key} | ${median(acc.gateway).toFixed(0)} | none (answered by the gateway) | none | ${median(acc.p99)} |`,
    );
  }
} finally {
  for (const c of children) c.kill('SIGTERM');
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r() : c.once('exit', r)))));
  await admin.query(`DROP DATABASE IF EXISTS bench_identity_${run} WITH (FORCE)`);
  await admin.query(`DROP DATABASE IF EXISTS bench_crm_${run} WITH (FORCE)`);
  await admin.end();
  const { deleteRabbitPrefix, clearRedisPrefix } = await import('@crm/testing');
  await deleteRabbitPrefix(process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672', exchange);
  await clearRedisPrefix(prefix);
}
