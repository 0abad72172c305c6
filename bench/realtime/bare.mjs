// bench/realtime/bare.mjs: the machine's own ceiling for the real-time path, measured the same way as run.mjs.
// A bare pipeline with the parts every design of the path has: an HTTP ingress that commits the message and its
// event in one transaction, an outbox relay (LISTEN/NOTIFY, publisher confirms, a quorum queue), a consumer that
// applies each batch in one transaction with its idempotency rows and POSTs a signed webhook to a receiver here.
// Three node processes (bare-roles.mjs), PostgreSQL, RabbitMQ and the load generator on the same cores. What our
// path does beyond it (the gateway and its gRPC hop, the connector's hop, crm and the live-update consumer) is what
// the ratio between the two runs measures.
//
// Usage: node bench/realtime/bare.mjs [--rate 800] [--seconds 30]; `run.mjs --bare` runs it before our path.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuPerUnit, cpuSnapshot } from '../lib/cpu.mjs';
import { freePort, root } from '../lib/processes.mjs';
import { webhookReceiver } from '../lib/webhook-receiver.mjs';

const require = createRequire(path.join(root, 'packages', 'events', 'package.json'));
const pg = require('pg');
const amqp = require('amqplib');
const here = path.dirname(fileURLToPath(import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => (xs.length ? Float64Array.from(xs).sort()[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : NaN);

/** One run of the bare pipeline at `rate` msg/s for `seconds`: delivered msg/s, latency and CPU per message. */
export async function runBare({ rate, seconds, pgUrl, amqpUrl, contacts = 500 }) {
  const run = `bare${Date.now().toString(36)}`;
  const dbName = `bench_${run}`;
  const dbUrl = Object.assign(new URL(pgUrl), { pathname: `/${dbName}` }).toString();
  const queue = `bench_${run}`;
  const admin = new pg.Pool({ connectionString: pgUrl, max: 2 });
  const children = [];
  const amqpConn = await amqp.connect(amqpUrl);
  const ch = await amqpConn.createChannel();
  const receiver = webhookReceiver((event, now) => arrived(event, now));
  const sentAt = new Map();
  const latencies = [];
  const delivered = new Set();
  let duplicates = 0;
  let last = 0;
  function arrived(event, now) {
    const key = event.data.content;
    if (delivered.has(key)) return void duplicates++;
    delivered.add(key);
    last = now;
    const t0 = sentAt.get(key);
    if (t0 !== undefined) latencies.push(now - t0);
  }
  try {
    await admin.query(`CREATE DATABASE "${dbName}"`);
    const db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    await db.query(`
      CREATE TABLE messages (id uuid PRIMARY KEY, sender text NOT NULL, content text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
      CREATE TABLE outbox (seq bigserial PRIMARY KEY, body text NOT NULL, published_at timestamptz);
      CREATE INDEX outbox_unpublished ON outbox (seq) WHERE published_at IS NULL;
      CREATE TABLE processed (event_id uuid PRIMARY KEY, at timestamptz NOT NULL DEFAULT now());
      CREATE TABLE deliveries (id bigserial PRIMARY KEY, event_id uuid NOT NULL, delivered_at timestamptz NOT NULL DEFAULT now());
      CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_notify('outbox', ''); RETURN NULL; END $$;
      CREATE TRIGGER outbox_notify AFTER INSERT ON outbox FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();`);
    await db.end();
    await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    receiver.setSecret(secret);
    const hookUrl = await receiver.listen();
    const port = await freePort();
    const env = { ...process.env, DATABASE_URL: dbUrl, AMQP_URL: amqpUrl, QUEUE: queue, PORT: String(port), HOOK_URL: hookUrl, HOOK_SECRET: secret };
    const pids = {};
    for (const role of ['consumer', 'relay', 'ingress']) {
      const child = fork(path.join(here, 'bare-roles.mjs'), [role], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      children.push(child);
      await new Promise((resolve, reject) => {
        child.once('message', resolve);
        child.once('exit', (code) => reject(new Error(`bare ${role} exited ${code}`)));
      });
      pids[`bare ${role}`] = child.pid;
    }

    const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
    let accepted = 0;
    let errors = 0;
    const send = (name, i) => {
      const content = `${name}-${i}-${randomBytes(3).toString('hex')}`;
      const body = JSON.stringify({ from: `uid-${i % contacts}`, content });
      sentAt.set(content, performance.now());
      return new Promise((resolve) => {
        const r = http.request(
          {
            host: '127.0.0.1',
            port,
            path: '/inbound',
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          },
          (res) => {
            res.resume().on('end', () => {
              if (res.statusCode === 200) accepted++;
              else errors++;
              resolve();
            });
          },
        );
        r.on('error', () => {
          errors++;
          resolve();
        });
        r.end(body);
      });
    };
    const openLoop = async (name, total, perSecond) => {
      const t0 = performance.now();
      const inflight = [];
      for (let i = 0; i < total; i++) {
        const wait = t0 + (i * 1000) / perSecond - performance.now();
        if (wait > 1) await sleep(wait);
        inflight.push(send(name, i));
      }
      await Promise.all(inflight);
      return t0;
    };
    const waitDelivered = async (n, timeoutMs) => {
      const until = Date.now() + timeoutMs;
      while (delivered.size < n && Date.now() < until) await sleep(50);
    };

    await openLoop('warm', Math.min(500, rate * 2), Math.min(rate, 200));
    await waitDelivered(accepted, 30_000);
    const warm = { delivered: delivered.size, accepted };
    delivered.clear();
    latencies.length = 0;
    accepted = 0;
    errors = 0;
    duplicates = 0;

    const total = Math.round(rate * seconds);
    const cpu0 = await cpuSnapshot({ processes: pids, dbs: { bare: dbName }, pool: admin });
    const started = await openLoop('run', total, rate);
    await waitDelivered(accepted, 60_000);
    const cpu = cpuPerUnit(cpu0, await cpuSnapshot({ processes: pids, dbs: { bare: dbName }, pool: admin }), delivered.size);
    const services = Object.entries(cpu)
      .filter(([label]) => label.startsWith('bare') || label.startsWith('pg '))
      .reduce((s, [, v]) => s + v, 0);
    return {
      warm,
      rate,
      seconds,
      sent: total,
      accepted,
      delivered: delivered.size,
      lost: accepted - delivered.size,
      duplicates,
      errors,
      perSecond: delivered.size / ((last - started) / 1000),
      p50: pct(latencies, 50),
      p99: pct(latencies, 99),
      cpu,
      services,
      all: services + (cpu.rabbitmq ?? 0),
      badSignatures: receiver.stats.badSignatures,
    };
  } finally {
    for (const c of children.reverse()) {
      c.kill('SIGTERM');
      await new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', r)));
    }
    receiver.close();
    await ch.deleteQueue(queue).catch(() => undefined);
    await amqpConn.close().catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

/** The run as a table row (the columns of bareTableHead). */
export function bareRow(label, r) {
  const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
  return `| ${label} | ${r.rate} | ${r.sent} | ${r.accepted} | ${r.delivered} | ${f(r.perSecond, 0)} | ${f(r.p50)} | ${f(r.p99)} | ${r.lost} | ${r.duplicates} | ${f(r.services, 2)} | ${f(r.all, 2)} |`;
}
export const bareTableHead = [
  '| run | offered msg/s | sent | accepted | delivered | delivered msg/s | p50 ms | p99 ms | lost | twice | CPU ms/msg (processes + pg) | with RabbitMQ |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|',
];

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { rate: { type: 'string', default: '800' }, seconds: { type: 'string', default: '30' } } });
  const r = await runBare({
    rate: Number(values.rate),
    seconds: Number(values.seconds),
    pgUrl: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    amqpUrl: process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  });
  console.log([...bareTableHead, bareRow('bare pipeline', r)].join('\n'));
  console.log(
    `\nCPU ms per message by process: ${Object.entries(r.cpu)
      .map(([k, v]) => `${k} ${v.toFixed(2)}`)
      .join(', ')}; invalid signatures ${r.badSignatures}`,
  );
}
