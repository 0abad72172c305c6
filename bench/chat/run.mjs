// bench/chat: inbound chat messages pushed through the sandbox network at increasing rates.
// Path: POST /sandbox/accounts/:id/inbound (gateway) → chatnet-connector (live sandbox session; the message
// and its `chatnet.inbound` event in one transaction, outbox) → relay → RabbitMQ → messaging consumer
// (message row + conversation counters + `message.received` in one transaction) → relay → RabbitMQ.
//
// "Network arrival" is the moment the sandbox network handed the message to the connector (the message's
// sentAt, stamped by the connector). Latency to the event = when this process consumed `message.received`;
// latency to the row = messages.stored_at (clock_timestamp() at insert) − sent_at. One host, one clock.
//
// A second source, `bus`, publishes the same `chatnet.inbound` events straight to the exchange (as the
// connector's relay does) to measure messaging's part alone; its network arrival is the publish moment.
//
// Every service runs as its own process from dist (build first) with fresh databases, a unique exchange
// and Redis prefix; the load generator shares the same 2 cores.
// Usage: node bench/chat/run.mjs   (writes the "## chat" section of bench/RESULTS.md)
//   BENCH_SOURCES (sandbox,bus), BENCH_RATES (200,400,600,800,1000,1200 msg/s), BENCH_SECONDS per step (10),
//   BENCH_CONTACTS (500), BENCH_PEAK_CONCURRENCY (64), BENCH_PEAK_SECONDS (10).
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { freePort } from '../lib/processes.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const require = createRequire(path.join(root, 'packages', 'events', 'package.json'));
const pg = require('pg');
const amqp = require('amqplib');
const SOURCES = (process.env.BENCH_SOURCES ?? 'sandbox,bus').split(',');
const RATES = (process.env.BENCH_RATES ?? '200,400,600,800,1000,1200').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 500);
const PEAK_CONCURRENCY = Number(process.env.BENCH_PEAK_CONCURRENCY ?? 64);
const PEAK_SECONDS = Number(process.env.BENCH_PEAK_SECONDS ?? 10);
const pgBase = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const amqpUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
// The bus source publishes as the connector's relay would: under its connection's user, which consumers check, and with
// the connector's event stamp, under which messaging asks crm for a new thread's contact.
const publisher = require('@crm/events').amqpUser(amqpUrl);
const internalAuthSeed = randomBytes(32).toString('hex');
const connectorAuth = require('@crm/grpc-kit').devInternalAuth('connector', internalAuthSeed);
const { EVENT_STAMP_HEADER } = require('@crm/events');
const stamp = Date.now().toString(36);
const exchange = `bench_chat_${stamp}`;
const services = ['identity', 'crm', 'chatnet-connector', 'messaging'];
const dbName = Object.fromEntries(services.map((s) => [s, `bench_chat_${s.replace(/-/g, '_')}_${stamp}`]));
const dbUrl = (name) => Object.assign(new URL(pgBase), { pathname: `/${name}` }).toString();
const attachmentsDir = mkdtempSync(path.join(tmpdir(), 'bench-chat-'));
const procs = [];
const pids = {}; // service → pid, for CPU accounting

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

function start(name, env, readyText) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [path.join(root, 'services', name, 'dist', 'main.js')], {
      cwd: root,
      env: { ...process.env, METRICS_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    procs.push(p);
    pids[name] = p.pid;
    let out = '';
    const onData = (d) => {
      out += d;
      if (out.length > 100_000) out = out.slice(-20_000);
      if (out.includes(readyText)) resolve(p);
    };
    p.stdout.on('data', onData);
    p.stderr.on('data', onData);
    p.on('exit', (code) => reject(new Error(`${name} exited ${code}: ${out.slice(-2000)}`)));
  });
}

// ---- what reaches the bus: message.received per marker (content), arrival time in wall-clock ms ----
const received = new Map(); // phase → [latency ms from network arrival]
const receivedCount = new Map();
const seenMessageIds = new Set();
let duplicateEvents = 0;
const phaseOf = (content) => content.split('-')[0];

// ---- the load: sandbox inbound through the gateway ----
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
let gatewayPort;
let token;
let accountId;
const accepted = new Map(); // phase → count of 200 answers
const errors = new Map();
const requestLatencies = new Map();

function inbound(phase, i) {
  const contact = i % CONTACTS;
  const body = JSON.stringify({
    fromUid: `uid-${contact}`,
    fromName: `Contact ${contact}`,
    content: `${phase}-${i}-${randomBytes(3).toString('hex')}`,
  });
  const t0 = performance.now();
  return new Promise((resolve) => {
    const r = http.request(
      {
        host: '127.0.0.1',
        port: gatewayPort,
        path: `/sandbox/accounts/${accountId}/inbound`,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${token}` },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          const bucket = res.statusCode === 200 ? accepted : errors;
          bucket.set(phase, (bucket.get(phase) ?? 0) + 1);
          if (!requestLatencies.has(phase)) requestLatencies.set(phase, []);
          requestLatencies.get(phase).push(performance.now() - t0);
          resolve(res.statusCode);
        });
      },
    );
    r.on('error', () => {
      errors.set(phase, (errors.get(phase) ?? 0) + 1);
      resolve(0);
    });
    r.end(body);
  });
}

// ---- or straight onto the bus, as the connector's outbox relay publishes ----
let pubChannel;
let orgId;
const busAccountId = randomUUID();
function publishInbound(phase, i) {
  const contact = i % CONTACTS;
  const id = randomUUID();
  const data = {
    accountId: busAccountId,
    chatnetMessageId: `bus-${id}`,
    threadId: `uid-${contact}`,
    threadType: 'user',
    fromUid: `uid-${contact}`,
    fromName: `Contact ${contact}`,
    fromAvatar: '',
    content: `${phase}-${i}-${randomBytes(3).toString('hex')}`,
    contentType: 'text',
    sentAt: new Date().toISOString(),
  };
  const body = Buffer.from(JSON.stringify({ id, type: 'chatnet.inbound', orgId, occurredAt: data.sentAt, data }));
  const headers = { [EVENT_STAMP_HEADER]: connectorAuth.stampEvent({ id, type: 'chatnet.inbound', orgId }) };
  const t0 = performance.now();
  return new Promise((resolve) => {
    pubChannel.publish(
      exchange,
      'chatnet.inbound',
      body,
      { persistent: true, userId: publisher, contentType: 'application/json', messageId: id, headers },
      (err) => {
        const bucket = err ? errors : accepted;
        bucket.set(phase, (bucket.get(phase) ?? 0) + 1);
        if (!requestLatencies.has(phase)) requestLatencies.set(phase, []);
        requestLatencies.get(phase).push(performance.now() - t0);
        resolve();
      },
    );
  });
}
let send = inbound;

/** Open loop: `rate` messages per second for `seconds`, whatever the answers' speed (no coordinated omission). */
async function openLoop(phase, rate, seconds) {
  const total = Math.round(rate * seconds);
  const t0 = performance.now();
  const inflight = [];
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    inflight.push(send(phase, i));
  }
  const sendSeconds = (performance.now() - t0) / 1000;
  await Promise.all(inflight);
  return { total, sendSeconds };
}

/** Closed loop: `concurrency` senders as fast as the system answers, to find the peak. */
async function closedLoop(phase, concurrency, seconds) {
  const until = performance.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) await send(phase, n++);
    }),
  );
  return n;
}

async function drain(phase, expected, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  while ((receivedCount.get(phase) ?? 0) < expected && Date.now() < until) await sleep(50);
  return receivedCount.get(phase) ?? 0;
}

/** CPU seconds used so far by each service process and by our PostgreSQL backends (from /proc). */
const TICK = 100;
function procCpu(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / TICK;
  } catch {
    return 0;
  }
}
/** Per process: [label, cpu seconds]; PostgreSQL backends are labelled with their service's database. */
async function cpuSnapshot() {
  const out = new Map();
  for (const [name, pid] of Object.entries(pids)) out.set(pid, [name, procCpu(pid)]);
  const { rows } = await messagingDb.query('SELECT pid, datname FROM pg_stat_activity WHERE datname = ANY($1)', [Object.values(dbName)]);
  for (const r of rows) {
    const service = Object.keys(dbName).find((k) => dbName[k] === r.datname);
    out.set(r.pid, [`pg ${service}`, procCpu(r.pid)]);
  }
  const u = process.cpuUsage();
  out.set(process.pid, ['load generator', (u.user + u.system) / 1e6]);
  return out;
}
/** CPU ms per message by label; a backend that ended between the snapshots is left out (its time is lost). */
function cpuPerMessage(before, after, n) {
  const labels = [...Object.keys(pids), ...Object.keys(dbName).map((k) => `pg ${k}`), 'load generator'];
  const sums = Object.fromEntries(labels.map((l) => [l, 0]));
  for (const [pid, [label, cpu]] of after) if (before.has(pid)) sums[label] += cpu - before.get(pid)[1];
  return Object.fromEntries(labels.map((l) => [l, n > 0 ? (sums[l] * 1000) / n : NaN]));
}

let messagingDb;
/** Rows stored for a phase, and their network-arrival → row latencies. */
async function rowsOf(phase) {
  const { rows } = await messagingDb.query(
    `SELECT extract(epoch FROM (stored_at - sent_at)) * 1000 AS ms, stored_at, sent_at FROM messages WHERE content LIKE $1`,
    [`${phase}-%`],
  );
  const lat = rows.map((r) => Number(r.ms));
  // Throughput actually achieved: rows over the span from the first arrival to the last row written.
  const first = Math.min(...rows.map((r) => r.sent_at.getTime()));
  const last = Math.max(...rows.map((r) => r.stored_at.getTime()));
  lat.perSecond = rows.length ? (rows.length * 1000) / Math.max(1, last - first) : 0;
  return lat;
}

let bus;
try {
  const admin = new pg.Client({ connectionString: pgBase });
  await admin.connect();
  for (const db of Object.values(dbName)) await admin.query(`CREATE DATABASE "${db}"`);
  await admin.end();

  const ports = Object.fromEntries(await Promise.all([...services, 'gateway'].map(async (s) => [s, await freePort()])));
  gatewayPort = ports.gateway;
  const common = {
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    AMQP_URL: amqpUrl,
    EVENTS_EXCHANGE: exchange,
    REDIS_PREFIX: `bench_chat_${stamp}:`,
    JWT_SECRET: randomBytes(32).toString('hex'),
    INTERNAL_AUTH_SEED: internalAuthSeed,
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    IDENTITY_ADDR: `127.0.0.1:${ports.identity}`,
    CRM_ADDR: `127.0.0.1:${ports.crm}`,
    CONNECTOR_ADDR: `127.0.0.1:${ports['chatnet-connector']}`,
    MESSAGING_ADDR: `127.0.0.1:${ports.messaging}`,
    // Nothing listens here: the chat path must not need them.
    AUTOMATION_ADDR: '127.0.0.1:9',
    AI_ADDR: '127.0.0.1:9',
    WEBHOOKS_ADDR: '127.0.0.1:9',
    SIGNUP_ENABLED: 'true',
  };
  const env = (s, extra = {}) => ({ ...common, DATABASE_URL: dbUrl(dbName[s]), GRPC_PORT: String(ports[s]), LOG_LEVEL: 'info', ...extra });
  await start('identity', env('identity'), 'identity listening');
  await start('crm', env('crm'), 'crm listening');
  await start('chatnet-connector', env('chatnet-connector', { CHATNET_DRIVER: 'sandbox' }), 'chatnet-connector listening');
  await start('messaging', env('messaging', { ATTACHMENTS_DIR: attachmentsDir }), 'messaging listening');
  await start(
    'gateway',
    {
      ...common,
      HOST: '127.0.0.1',
      PORT: String(ports.gateway),
      SERVICES: 'identity,crm,chatnet-connector,messaging',
      RATE_LIMIT_USER_PER_MINUTE: '100000000',
      RATE_LIMIT_AUTH_PER_MINUTE: '1000',
      LOG_LEVEL: 'info',
    },
    'gateway listening',
  );
  messagingDb = new pg.Pool({ connectionString: dbUrl(dbName.messaging), max: 2 });

  const api = (method, p, body) =>
    fetch(`http://127.0.0.1:${ports.gateway}${p}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body && JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: await r.json().catch(() => undefined) }));
  const signup = await api('POST', '/api/v1/auth/signup', {
    orgName: 'Bench',
    fullName: 'Bench Owner',
    email: `bench${stamp}@example.test`,
    password: 'bench password 1',
  });
  token = signup.body.token;
  const created = await api('POST', '/api/v1/chatnet-accounts', { displayName: 'Bench line' });
  accountId = created.body.id;
  if ((await api('POST', `/api/v1/chatnet-accounts/${accountId}/login`)).status !== 200) throw new Error('login failed');
  const scan = await api('POST', `/sandbox/accounts/${accountId}/scan`, {});
  if (scan.body?.status !== 'connected') throw new Error(`scan failed: ${JSON.stringify(scan.body)}`);

  // Watch message.received on the bus (a queue of this process, bound like any consumer).
  const conn = await amqp.connect(amqpUrl, { noDelay: true });
  bus = conn;
  const ch = await conn.createChannel();
  await ch.assertExchange(exchange, 'topic', { durable: true });
  const q = await ch.assertQueue('', { exclusive: true, autoDelete: true });
  await ch.bindQueue(q.queue, exchange, 'message.received');
  await ch.prefetch(1000);
  await ch.consume(
    q.queue,
    (m) => {
      const now = Date.now();
      const e = JSON.parse(m.content.toString());
      ch.ack(m);
      if (seenMessageIds.has(e.data.messageId)) duplicateEvents++;
      seenMessageIds.add(e.data.messageId);
      const phase = phaseOf(e.data.content);
      if (!received.has(phase)) received.set(phase, []);
      received.get(phase).push(now - Date.parse(e.data.sentAt));
      receivedCount.set(phase, (receivedCount.get(phase) ?? 0) + 1);
    },
    { noAck: false },
  );

  orgId = signup.body.user.orgId;
  pubChannel = await conn.createConfirmChannel();

  const f = (x) => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');
  const lossless = (s) => s.errors === 0 && s.events === s.ok && s.rows === s.ok;
  const results = [];
  for (const source of SOURCES) {
    send = source === 'bus' ? publishInbound : inbound;
    const tag = source === 'bus' ? 'bus' : 'sbx';
    // Warm-up: every contact writes once (contacts created in crm, conversations in messaging), JIT and pools warm.
    const warm = await openLoop(`${tag}warm`, 100, CONTACTS / 100);
    await drain(`${tag}warm`, accepted.get(`${tag}warm`) ?? warm.total);

    const steps = [];
    for (const rate of RATES) {
      const phase = `${tag}${rate}`;
      const cpu0 = await cpuSnapshot();
      const run = await openLoop(phase, rate, SECONDS);
      const ok = accepted.get(phase) ?? 0;
      const got = await drain(phase, ok);
      await sleep(500);
      const rows = await rowsOf(phase);
      const ev = received.get(phase) ?? [];
      const cpu = cpuPerMessage(cpu0, await cpuSnapshot(), rows.length);
      steps.push({
        label: String(rate),
        rate,
        sent: run.total,
        ok,
        errors: errors.get(phase) ?? 0,
        events: got,
        rows: rows.length,
        perSecond: rows.perSecond,
        ev,
        rowLat: rows,
        req: requestLatencies.get(phase) ?? [],
        cpu,
      });
      console.log(
        `${source} ${rate}/s: accepted ${ok}/${run.total}, events ${got}, rows ${rows.length}, event p99 ${f(pct(ev, 99))} ms, row p99 ${f(pct(rows, 99))} ms`,
      );
      await sleep(2000);
    }
    const phase = `${tag}peak`;
    const cpu0 = await cpuSnapshot();
    const peakSent = await closedLoop(phase, PEAK_CONCURRENCY, PEAK_SECONDS);
    const peakOk = accepted.get(phase) ?? 0;
    const peakGot = await drain(phase, peakOk);
    await sleep(500);
    const peakRows = await rowsOf(phase);
    steps.push({
      label: `peak (closed loop, ${PEAK_CONCURRENCY} senders)`,
      sent: peakSent,
      ok: peakOk,
      errors: errors.get(phase) ?? 0,
      events: peakGot,
      rows: peakRows.length,
      perSecond: peakRows.perSecond,
      ev: received.get(phase) ?? [],
      rowLat: peakRows,
      req: requestLatencies.get(phase) ?? [],
      cpu: cpuPerMessage(cpu0, await cpuSnapshot(), peakRows.length),
    });
    const good = steps.filter((s) => s.rate && lossless(s) && pct(s.ev, 99) < 100 && pct(s.rowLat, 99) < 100);
    const best = good.reduce((m, s) => (s.rate > (m?.rate ?? 0) ? s : m), undefined);
    results.push({ source, steps, best });
    await sleep(2000);
  }

  /** What the CPU table implies: messages per second two otherwise idle cores could carry (RabbitMQ not counted). */
  const capacity = (r) => {
    const med = (xs) => pct(xs.filter(Number.isFinite), 50);
    const ours = med(r.steps.map((s) => s.cpu.messaging + s.cpu['pg messaging']));
    const path_ = med(
      r.steps.map((s) =>
        Object.entries(s.cpu)
          .filter(([k]) => k !== 'load generator')
          .reduce((a, [, v]) => a + v, 0),
      ),
    );
    return (
      `Median CPU per message: messaging ${f(ours)} ms (its process and its PostgreSQL backends), every service of the path ${f(path_)} ms. ` +
      `On two otherwise idle cores that bounds throughput near ${(2000 / ours).toFixed(0)} msg/s for messaging alone and ${(2000 / path_).toFixed(0)} msg/s for the path ` +
      '(before RabbitMQ, which is not counted); the rates above are lower when other work shares the machine.'
    );
  };
  const table = (r) => [
    `| offered msg/s | sent | accepted | stored rows | message.received | stored msg/s | → event p50 ms | → event p99 ms | → row p50 ms | → row p99 ms | ${r.source === 'bus' ? 'publish confirm' : 'HTTP'} p99 ms | errors |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...r.steps.map(
      (s) =>
        `| ${s.label} | ${s.sent} | ${s.ok} | ${s.rows} | ${s.events} | ${s.perSecond.toFixed(0)} | ${f(pct(s.ev, 50))} | ${f(pct(s.ev, 99))} | ${f(pct(s.rowLat, 50))} | ${f(pct(s.rowLat, 99))} | ${f(pct(s.req, 99))} | ${s.errors} |`,
    ),
    '',
    "CPU milliseconds per stored message, by process (from /proc; pg = the PostgreSQL backends of each service's database; RabbitMQ not counted):",
    '',
    `| offered msg/s | ${Object.keys(r.steps[0].cpu).join(' | ')} | total |`,
    `|---|${Object.keys(r.steps[0].cpu)
      .map(() => '---|')
      .join('')}---|`,
    ...r.steps.map(
      (s) =>
        `| ${s.label} | ${Object.values(s.cpu)
          .map((v) => f(v))
          .join(' | ')} | ${f(Object.values(s.cpu).reduce((a, b) => a + b, 0))} |`,
    ),
    '',
    capacity(r),
    '',
    `Highest offered rate with nothing lost and p99 < 100 ms to both the event and the row: **${r.best ? `${r.best.rate} msg/s (${r.best.perSecond.toFixed(0)} stored/s)` : 'none'}**; ` +
      `target 800 msg/s: **${r.best && r.best.rate >= 800 ? 'met' : 'NOT met'}**.`,
    '',
  ];
  const titles = {
    sandbox:
      '### Through the sandbox network (whole path)\n\n`POST /sandbox/accounts/:id/inbound` through the gateway → chatnet-connector (live sandbox session; `chatnet.inbound` through its outbox) → RabbitMQ → messaging (message row, conversation counters and `message.received` in one transaction, outbox) → RabbitMQ. Network arrival = the sentAt the sandbox stamps when it hands the message to the connector.\n',
    bus: "### Messaging alone (`chatnet.inbound` published straight to the exchange)\n\nThe same events as the connector's relay publishes them (persistent, publisher confirms), so the gateway and connector are out of the measurement. Network arrival = the moment of publishing.\n",
  };
  const section = [
    '## chat',
    '',
    `Command: \`node bench/chat/run.mjs\` (own load generator: open loop at each rate for ${SECONDS} s, then a closed loop of ${PEAK_CONCURRENCY} senders for ${PEAK_SECONDS} s; every service a separate process from dist; all on the same 2 cores, load generator included). Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; 1-minute load average at the end ${os.loadavg()[0].toFixed(1)} (other work shares this machine).`,
    '',
    `${CONTACTS} contacts write in turn; their contacts (crm) and conversations are created during a warm-up that is not reported. Latency runs from network arrival to \`message.received\` consumed from RabbitMQ by this process, and to the message row (\`stored_at\`, clock_timestamp() at insert). Duplicate message.received events seen: ${duplicateEvents}.`,
    '',
    ...results.flatMap((r) => [titles[r.source], ...table(r)]),
  ].join('\n');
  const file = path.join(root, 'bench', 'RESULTS.md');
  let text = existsSync(file)
    ? readFileSync(file, 'utf8')
    : '# Benchmark results\n\nEach section is written by its benchmark; ratios compare paths measured in the same run.\n\n';
  const re = /## chat\n[\s\S]*?(?=\n## |$)/;
  text = re.test(text) ? text.replace(re, section) : `${text.trimEnd()}\n\n${section}`;
  writeFileSync(file, text);
  console.log(section);
} finally {
  agent.destroy();
  await bus?.close().catch(() => undefined);
  await messagingDb?.end().catch(() => undefined);
  for (const p of procs) p.kill('SIGTERM');
  await sleep(3000);
  const c = new pg.Client({ connectionString: pgBase });
  await c.connect();
  for (const db of Object.values(dbName)) await c.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
  await c.end();
  rmSync(attachmentsDir, { recursive: true, force: true });
  const { deleteRabbitPrefix, clearRedisPrefix } = require('@crm/testing');
  await deleteRabbitPrefix(amqpUrl, exchange).catch(() => undefined);
  // Live-session keys the connector writes until it stops.
  await clearRedisPrefix(`bench_chat_${stamp}:`).catch(() => undefined);
}
