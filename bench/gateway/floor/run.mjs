// bench/gateway/floor: how close any gateway → gRPC → service design can come to the one-process reference on this
// machine, for the cheapest read (GET /api/v1/profile). The floor is the same work as the reference (JWT verified
// with a KeyObject, one prepared SELECT by key, the row as JSON) split over two processes joined by @grpc/grpc-js,
// with nothing else: node:http instead of express, no middleware, no internal credential, no spans, no metrics, no
// rate limit (front.mjs, service.mjs). If the floor itself is under a ratio, no gateway built to the design card
// (a gateway calling services over @grpc/grpc-js) reaches that ratio here; the product's gateway is measured by
// bench/gateway/run.mjs.
// Usage: [FLOOR_VARIANTS=floor,express,als,coalesce,envelope] node bench/gateway/floor/run.mjs   (autocannon, 50 connections, 10 s per
// run, median of 3 alternating runs after a warm-up; prints the table, writes nothing)
import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import pg from 'pg';
import { autocannon } from '../../lib/autocannon.mjs';
import { cpuPerUnit, cpuSnapshot } from '../../lib/cpu.mjs';
import { freePort, processGroup } from '../../lib/processes.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// FLOOR_VARIANTS=floor,express,als,coalesce,envelope: the floor, the floor with express in front, the floor with
// AsyncLocalStorage in the service (what the product's gateway and services carry that the floor does not, one at a
// time); the reads of one event-loop turn sent as one call, answered with one SELECT (coalesce) or one each (envelope,
// what grpc-kit's call batches do).
const VARIANT_ENV = {
  floor: { front: {}, service: {} },
  express: { front: { FLOOR_EXPRESS: '1' }, service: {} },
  als: { front: {}, service: { FLOOR_ALS: '1' } },
  coalesce: { front: { FLOOR_COALESCE: '1' }, service: {} },
  envelope: { front: { FLOOR_COALESCE: '1' }, service: { FLOOR_PER_ITEM: '1' } },
};
const LABELS = {
  reference: 'reference: one process, express + JWT verify (KeyObject) + SELECT by key',
  floor: 'floor: node:http + JWT → @grpc/grpc-js → bare service → SELECT by key',
  express: 'floor with express in front (one route, res.json)',
  als: 'floor with AsyncLocalStorage (OpenTelemetry context manager) in the service',
  coalesce: 'floor with the reads of one event-loop turn coalesced into one call and one SELECT',
  envelope: 'floor with the reads of one event-loop turn coalesced into one call, one SELECT each',
};
const VARIANTS = (process.env.FLOOR_VARIANTS ?? 'floor,express,als').split(',').filter((v) => {
  if (!VARIANT_ENV[v]) throw new Error(`FLOOR_VARIANTS: unknown variant ${v}; known: ${Object.keys(VARIANT_ENV).join(', ')}`);
  return true;
});
const pgBase = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const db = `bench_floor_${Date.now().toString(36)}`;
const dbUrl = Object.assign(new URL(pgBase), { pathname: `/${db}` }).toString();
const secret = randomBytes(32).toString('hex');
const group = processGroup();
const admin = new pg.Client({ connectionString: pgBase });
await admin.connect();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const loadBefore = os
  .loadavg()
  .map((x) => x.toFixed(2))
  .join(' ');

const ready = (child) =>
  new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => String(d).includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`exited ${code}`)));
  });

try {
  await admin.query(`CREATE DATABASE ${db}`);
  const seed = new pg.Client({ connectionString: dbUrl });
  await seed.connect();
  // identity's users columns that the profile reads.
  await seed.query(`CREATE TABLE users (id uuid PRIMARY KEY, org_id uuid NOT NULL, email text NOT NULL, full_name text NOT NULL,
    role text NOT NULL, department text, avatar text, created_at timestamptz NOT NULL DEFAULT now(), last_login timestamptz)`);
  const [userId, orgId] = [randomUUID(), randomUUID()];
  await seed.query(
    `INSERT INTO users (id, org_id, email, full_name, role, last_login) VALUES ($1, $2, 'owner@example.test', 'Bench Owner', 'owner', now())`,
    [userId, orgId],
  );
  await seed.end();
  const token = jwt.sign({ sub: userId, org: orgId, role: 'owner' }, secret, { algorithm: 'HS256', expiresIn: '1h' });

  const here = path.join('bench', 'gateway');
  const referencePort = await freePort();
  const reference = group.launch(
    'reference',
    { DATABASE_URL: dbUrl, CRM_DATABASE_URL: dbUrl, MESSAGING_DATABASE_URL: dbUrl, JWT_SECRET: secret, PORT: String(referencePort) },
    { main: path.join(here, 'reference.mjs') },
  );
  const referenceReady = ready(reference);
  const urls = { reference: `http://127.0.0.1:${referencePort}/api/v1/profile` };
  const pids = { reference: { reference: reference.pid } };
  // One front and service pair per variant, each with its own flags.
  for (const name of VARIANTS) {
    const [servicePort, frontPort] = [await freePort(), await freePort()];
    const service = group.launch(
      `${name}-service`,
      { DATABASE_URL: dbUrl, GRPC_PORT: String(servicePort), ...VARIANT_ENV[name].service },
      { main: path.join(here, 'floor', 'service.mjs') },
    );
    await ready(service);
    const front = group.launch(
      `${name}-front`,
      { SERVICE_PORT: String(servicePort), PORT: String(frontPort), JWT_SECRET: secret, ...VARIANT_ENV[name].front },
      { main: path.join(here, 'floor', 'front.mjs') },
    );
    await ready(front);
    urls[name] = `http://127.0.0.1:${frontPort}/api/v1/profile`;
    pids[name] = { front: front.pid, service: service.pid };
  }
  await referenceReady;

  const pool = new pg.Pool({ connectionString: pgBase, max: 1 });
  const runs = Object.fromEntries(['reference', ...VARIANTS].map((n) => [n, []]));
  const measure = async (name) => {
    const before = await cpuSnapshot({ processes: pids[name], dbs: { db }, pool, shared: false });
    const r = await autocannon(urls[name], token, ['-c', '50', '-d', String(DURATION)]);
    const cpu = cpuPerUnit(before, await cpuSnapshot({ processes: pids[name], dbs: { db }, pool, shared: false }), r.requests.total);
    const parts = Object.entries(cpu).filter(([k]) => k !== 'load generator');
    const us = parts.reduce((sum, [, ms]) => sum + ms * 1000, 0);
    const split = parts.map(([k, ms]) => `${k} ${(ms * 1000).toFixed(0)}`).join(', ');
    return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, us, split };
  };
  // Warm-up, then alternate so drift on a busy machine hits every variant alike.
  for (const name of Object.keys(runs)) await measure(name);
  for (let i = 0; i < ROUNDS; i++) for (const name of Object.keys(runs)) runs[name].push(await measure(name));
  await pool.end();
  const rps = (name) => median(runs[name].map((r) => r.rps));
  const row = (name) =>
    `| ${LABELS[name]} | ${rps(name).toFixed(0)} | ${((rps(name) / rps('reference')) * 100).toFixed(0)}% | ${median(runs[name].map((r) => r.p50))} | ${median(runs[name].map((r) => r.p99))} | ${median(runs[name].map((r) => r.us)).toFixed(0)} |`;
  console.log(
    [
      `Command: \`node bench/gateway/floor/run.mjs\` (variants ${VARIANTS.join(', ')}; autocannon, 50 connections, ${DURATION} s per run, median of ${ROUNDS} alternating runs after a warm-up; load average before ${loadBefore}).`,
      '',
      '| GET /api/v1/profile | req/s | of the reference | p50 ms | p99 ms | CPU µs per request (processes + PostgreSQL) |',
      '|---|---|---|---|---|---|',
      ...['reference', ...VARIANTS].map(row),
      '',
      ...Object.keys(runs).map((n) => `- ${n}, each run: ${runs[n].map((r) => `${r.rps.toFixed(0)} req/s (µs: ${r.split})`).join('; ')}`),
    ].join('\n'),
  );
} finally {
  await group.stopAll();
  await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  await admin.end();
}
