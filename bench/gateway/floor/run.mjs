// bench/gateway/floor: how close any gateway → gRPC → service design can come to the one-process reference on this
// machine, for the cheapest read (GET /api/v1/profile). The floor is the same work as the reference (JWT verified
// with a KeyObject, one prepared SELECT by key, the row as JSON) split over two processes joined by @grpc/grpc-js,
// with nothing else: node:http instead of express, no middleware, no internal credential, no spans, no metrics, no
// rate limit (front.mjs, service.mjs). If the floor itself is under a ratio, no gateway built to the design card
// (a gateway calling services over @grpc/grpc-js) reaches that ratio here; the product's gateway is measured by
// bench/gateway/run.mjs.
// Usage: node bench/gateway/floor/run.mjs   (autocannon, 50 connections, 10 s per run, median of 3 alternating runs
// after a warm-up; prints the table, writes nothing)
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

  const [servicePort, frontPort, referencePort] = [await freePort(), await freePort(), await freePort()];
  const here = path.join('bench', 'gateway');
  const service = group.launch(
    'floor-service',
    { DATABASE_URL: dbUrl, GRPC_PORT: String(servicePort) },
    { main: path.join(here, 'floor', 'service.mjs') },
  );
  await ready(service);
  const front = group.launch(
    'floor-front',
    { SERVICE_PORT: String(servicePort), PORT: String(frontPort), JWT_SECRET: secret },
    { main: path.join(here, 'floor', 'front.mjs') },
  );
  const reference = group.launch(
    'reference',
    { DATABASE_URL: dbUrl, CRM_DATABASE_URL: dbUrl, MESSAGING_DATABASE_URL: dbUrl, JWT_SECRET: secret, PORT: String(referencePort) },
    { main: path.join(here, 'reference.mjs') },
  );
  await Promise.all([ready(front), ready(reference)]);

  const pool = new pg.Pool({ connectionString: pgBase, max: 1 });
  const runs = { floor: [], reference: [] };
  const urls = { floor: `http://127.0.0.1:${frontPort}/api/v1/profile`, reference: `http://127.0.0.1:${referencePort}/api/v1/profile` };
  const pids = { floor: { front: front.pid, service: service.pid }, reference: { reference: reference.pid } };
  const measure = async (name) => {
    const before = await cpuSnapshot({ processes: pids[name], dbs: { db }, pool, shared: false });
    const r = await autocannon(urls[name], token, ['-c', '50', '-d', String(DURATION)]);
    const cpu = cpuPerUnit(before, await cpuSnapshot({ processes: pids[name], dbs: { db }, pool, shared: false }), r.requests.total);
    const parts = Object.entries(cpu).filter(([k]) => k !== 'load generator');
    const us = parts.reduce((sum, [, ms]) => sum + ms * 1000, 0);
    const split = parts.map(([k, ms]) => `${k} ${(ms * 1000).toFixed(0)}`).join(', ');
    return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, us, split };
  };
  await measure('reference');
  await measure('floor');
  for (let i = 0; i < ROUNDS; i++) {
    runs.reference.push(await measure('reference'));
    runs.floor.push(await measure('floor'));
  }
  await pool.end();
  const row = (label, rs) =>
    `| ${label} | ${median(rs.map((r) => r.rps)).toFixed(0)} | ${median(rs.map((r) => r.p50))} | ${median(rs.map((r) => r.p99))} | ${median(rs.map((r) => r.us)).toFixed(0)} |`;
  const ratio = median(runs.floor.map((r) => r.rps)) / median(runs.reference.map((r) => r.rps));
  console.log(
    [
      `Command: \`node bench/gateway/floor/run.mjs\` (autocannon, 50 connections, ${DURATION} s per run, median of ${ROUNDS} alternating runs after a warm-up; load average before ${loadBefore}).`,
      '',
      '| GET /api/v1/profile | req/s | p50 ms | p99 ms | CPU µs per request (processes + PostgreSQL) |',
      '|---|---|---|---|---|',
      row('floor: node:http + JWT → @grpc/grpc-js → bare service → SELECT by key', runs.floor),
      row('reference: one process, express + JWT verify (KeyObject) + SELECT by key', runs.reference),
      '',
      `The floor: **${(ratio * 100).toFixed(0)}%** of the reference's req/s.`,
      `Each run: floor ${runs.floor.map((r) => `${r.rps.toFixed(0)} req/s (µs: ${r.split})`).join('; ')}; reference ${runs.reference.map((r) => `${r.rps.toFixed(0)} req/s (µs: ${r.split})`).join('; ')}.`,
    ].join('\n'),
  );
} finally {
  await group.stopAll();
  await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  await admin.end();
}
