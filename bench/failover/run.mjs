// bench/failover: how long after a chat-network connector process dies (SIGKILL: no goodbye) its live sessions are
// live again on another process, reconnected from the stored session data. The latency bound that used to sit in
// tests/chatnet-connector/pool-failover.test.ts (which now only checks that the takeover happens) lives here.
//
// Two connector processes from dist (build first) share a fresh database, a Redis prefix and an exchange, with the
// sandbox driver and rebalancing off. BENCH_ACCOUNTS accounts log in on A (QR login completed through the sandbox);
// A is killed; the takeover time of an account is from the kill to B reporting it `connected` with a connectedAt
// after the kill. The lease lifetime sets most of it (LEASE_TTL_MS, default 10 s; HEARTBEAT_MS how often a holder
// renews): BENCH_LEASE_TTL_MS and BENCH_HEARTBEAT_MS change both for a run.
// Usage: node bench/failover/run.mjs   (prints one JSON line; BENCH_ROUNDS, default 1, repeats with fresh processes)
//   BENCH_ACCOUNTS (3), BENCH_ROUNDS (1), BENCH_TIMEOUT_MS (60000: a round that takes longer is reported as failed)
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { benchDbUrl, freePort, root } from '../lib/processes.mjs';

const require = createRequire(path.join(root, 'services', 'chatnet-connector', 'package.json'));
const pg = require('pg');
const { createClient } = require('@redis/client');
const amqp = createRequire(path.join(root, 'packages', 'events', 'package.json'))('amqplib');
const { checkHealth, createServiceClient, devInternalAuth, loadProto, serviceDefinition } = require('@crm/grpc-kit');

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 60_000);
const pgUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const amqpUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const CONNECTOR_MAIN = path.join(root, 'services', 'chatnet-connector', 'dist', 'main.js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, fn, timeoutMs, everyMs = 50) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/** Remove a round's Redis keys and exchange (its queues were the connectors' own, auto-deleted or left empty). */
async function forget(prefix, exchange) {
  const redis = createClient({ url: redisUrl });
  await redis.connect();
  for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) if (keys.length) await redis.unlink(keys);
  redis.destroy();
  const conn = await amqp.connect(amqpUrl);
  const ch = await conn.createChannel();
  await ch.deleteExchange(exchange);
  await conn.close();
}

async function round(n) {
  const run = `${Date.now().toString(36)}_${n}`;
  const dbUrl = benchDbUrl(pgUrl, run)('connector');
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  const dbName = new URL(dbUrl).pathname.slice(1);
  await admin.query(`CREATE DATABASE "${dbName}"`);
  const seed = randomBytes(32).toString('hex');
  const env = {
    ...process.env,
    NODE_ENV: 'development',
    LOG_LEVEL: 'error',
    // Services this bench does not run point at a port nothing listens on (9), never at their defaults, where a
    // running `npm start` on this machine would answer.
    ...Object.fromEntries(
      ['IDENTITY_ADDR', 'CRM_ADDR', 'MESSAGING_ADDR', 'AUTOMATION_ADDR', 'AI_ADDR', 'WEBHOOKS_ADDR'].map((k) => [k, '127.0.0.1:9']),
    ),
    MESSAGING_HTTP_URL: 'http://127.0.0.1:9',
    METRICS_PORT: '0',
    DATABASE_URL: dbUrl,
    REDIS_PREFIX: `bench_${run}:`,
    EVENTS_EXCHANGE: `bench_${run}`,
    INTERNAL_AUTH_SEED: seed,
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    CHATNET_DRIVER: 'sandbox',
    REBALANCE_INTERVAL_MS: '0',
    ...(process.env.BENCH_LEASE_TTL_MS ? { LEASE_TTL_MS: process.env.BENCH_LEASE_TTL_MS } : {}),
    ...(process.env.BENCH_HEARTBEAT_MS ? { HEARTBEAT_MS: process.env.BENCH_HEARTBEAT_MS } : {}),
  };
  const children = [];
  const launch = async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [CONNECTOR_MAIN], {
      cwd: root,
      env: { ...env, GRPC_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d) => process.stderr.write(`[connector:${port}] ${d}`));
    child.stderr.on('data', (d) => process.stderr.write(`[connector:${port}] ${d}`));
    children.push(child);
    const address = `127.0.0.1:${port}`;
    await until('connector healthy', () => checkHealth(address), 60_000, 200);
    return { child, address };
  };
  const proto = loadProto('connector/v1/connector.proto');
  const clientOf = (address) =>
    createServiceClient(serviceDefinition(proto, 'connector.v1.ConnectorService'), address, devInternalAuth('gateway', seed), 10_000);
  const ctx = { orgId: randomUUID(), userId: randomUUID(), role: 'owner', requestId: `bench-${run}` };
  let rpcA;
  let rpcB;
  try {
    // One at a time: both run the migrations at start.
    const a = await launch();
    const b = await launch();
    rpcA = clientOf(a.address);
    rpcB = clientOf(b.address);
    const ids = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const { id } = await rpcA.CreateAccount({ displayName: `Line ${i}` }, ctx);
      await rpcA.Login({ id }, ctx);
      await rpcA.SandboxScan({ id }, ctx);
      ids.push(id);
    }
    await until(
      'all live on A',
      async () => (await Promise.all(ids.map((id) => rpcA.GetStatus({ id }, ctx)))).every((s) => s.liveStatus?.state === 'connected'),
      30_000,
    );

    const killedAt = Date.now();
    a.child.kill('SIGKILL');
    const backAt = new Map();
    await until(
      'every account live on B',
      async () => {
        for (const id of ids) {
          if (backAt.has(id)) continue;
          const s = (await rpcB.GetStatus({ id }, ctx)).liveStatus;
          if (s?.state === 'connected' && Date.parse(s.connectedAt) >= killedAt) backAt.set(id, Date.now() - killedAt);
        }
        return backAt.size === ids.length;
      },
      TIMEOUT_MS,
    );
    const times = [...backAt.values()].sort((x, y) => x - y);
    return { firstMs: times[0], lastMs: times[times.length - 1] };
  } finally {
    rpcA?.close();
    rpcB?.close();
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? undefined : new Promise((r) => c.once('exit', r)))));
    await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    await forget(env.REDIS_PREFIX, env.EVENTS_EXCHANGE).catch((err) => process.stderr.write(`cleanup: ${err.message}\n`));
  }
}

const rounds = [];
for (let n = 0; n < ROUNDS; n++) rounds.push(await round(n));
console.log(
  JSON.stringify({
    accounts: ACCOUNTS,
    leaseTtlMs: Number(process.env.BENCH_LEASE_TTL_MS ?? 10_000),
    rounds,
    worstTakeoverMs: Math.max(...rounds.map((r) => r.lastMs)),
  }),
);
