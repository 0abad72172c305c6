// bench/realtime: a customer's message to the team's own system, the whole real-time path.
// The sandbox chat network, in its own process, gets POST /accounts/:id/inbound (a contact writes) and pushes it over the
// account's WebSocket to chatnet-connector (chatnet.inbound, published with confirms) → RabbitMQ → messaging
// (message row, conversation, message.received, outbox) → RabbitMQ → webhooks (delivery row) → signed POST to a
// receiver in this process, which verifies every signature (Standard Webhooks).
//
// Reported: messages/s delivered, latency from the HTTP request to the webhook (p50/p99), lost (accepted but never
// delivered), applied twice (a message delivered more than once, a message.received id seen twice), and the CPU
// each process spent per message: every service, their PostgreSQL backends, RabbitMQ, Redis and this process. The
// sandbox network plays the outside network (a real one does not run on our machines, and its traffic does not pass
// through our gateway): its CPU is reported in its own column and left out of the totals, like the load generator's.
// --inbound-via gateway sends the inbound load through the gateway's POST /sandbox/accounts/:id/inbound instead (the
// path measured before the network had its own process; the in-gateway route stays for tests and users).
// With --rabbit-restart a second run at 300 msg/s restarts RabbitMQ (rabbitmqctl stop_app / start_app) in its
// middle: it must lose nothing and apply nothing twice. That touches the machine's shared broker: run it alone.
//
// BENCH_LOG_LEVEL=info shows the services' info lines (default warn).
// Usage: node bench/realtime/run.mjs [--rate 800] [--seconds 30] [--rabbit-restart] [--write] [--pg-statements] [--timeline]
//   [--inbound-via network|gateway]
//   --timeline prints, per second of sending, the HTTP and webhook latencies of the messages sent in it.
//   Every service `npm start` runs is started (automation and ai too, as users run the product); --without
//   leaves some out for diagnosis (e.g. --without automation,ai), never by default.
//   --faults adds a run at --fault-rate (50) msg/s for 70 s during which every PostgreSQL backend of the run's
//   databases is terminated twice, Redis is paused for 5 s (CLIENT PAUSE) and RabbitMQ's app is restarted: no
//   process may exit, nothing accepted may be lost or applied twice, and the path must be back under its normal
//   p99 (runs at the same rate without faults, 35 s just before and 35 s just after: bench/realtime/recovery.mjs)
//   within 10 s of each fault. It touches the machine's shared servers: run it alone.
//   --fault-control runs that schedule with no fault done: how often the recovery test fails a run with nothing wrong.
//   Its CPU table (sampled every second) gives each process's share in the baseline and in the 10 s after each fault,
//   with the machine's busy and steal time: a slow recovery shows whether a process or the whole machine was busy.
//   --pg-statements lists the costliest SQL statements per message (needs pg_stat_statements: bench/lib/pg-statements.mjs;
//   BENCH_PG_TOP=n lists n of them, 8 by default).
//   --bare first runs the bare pipeline (bare.mjs: the least any design of this path does per message) at the same
//   rate, on the same machine in the same run, and reports our path against it.
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { parseArgs, promisify } from 'node:util';
import { commitSnapshot, commitsPerUnit, cpuPerUnit, cpuSnapshot } from '../lib/cpu.mjs';
import { cpuTimeline } from '../lib/cpu-timeline.mjs';
import { resetStatements, statementsAvailable, topStatements } from '../lib/pg-statements.mjs';
import { freePort, processGroup, root, signupOrg, waitReady, wholeStackEnv } from '../lib/processes.mjs';
import { writeResultsSection } from '../lib/results.mjs';
import { webhookReceiver } from '../lib/webhook-receiver.mjs';
import { bareRow, bareTableHead, runBare } from './bare.mjs';
import { recoveryYardstick } from './recovery.mjs';

// How busy the machine was before this run started (1, 5 and 15 minutes): CPU per message rises on a machine still busy
// with a build, a test run or another benchmark's vacuum, and the bare pipeline measured first feels it differently.
const LOAD_BEFORE = os.loadavg();
const { values: args } = parseArgs({
  options: {
    rate: { type: 'string', default: '800' },
    seconds: { type: 'string', default: '30' },
    contacts: { type: 'string', default: '500' },
    'rabbit-restart': { type: 'boolean', default: false },
    'restart-rate': { type: 'string', default: '300' },
    without: { type: 'string', default: '' },
    faults: { type: 'boolean', default: false },
    'fault-rate': { type: 'string', default: '50' },
    'fault-control': { type: 'boolean', default: false },
    'new-sender-rate': { type: 'string', default: '' },
    write: { type: 'boolean', default: false },
    'pg-statements': { type: 'boolean', default: false },
    bare: { type: 'boolean', default: false },
    timeline: { type: 'boolean', default: false },
    'inbound-via': { type: 'string', default: 'network' },
  },
});
if (!['network', 'gateway'].includes(args['inbound-via'])) throw new Error('--inbound-via is network or gateway');
const VIA_GATEWAY = args['inbound-via'] === 'gateway';
const RATE = Number(args.rate);
const SECONDS = Number(args.seconds);
const CONTACTS = Number(args.contacts);
const require = createRequire(path.join(root, 'packages', 'events', 'package.json'));
const pg = require('pg');
const pgUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const amqpUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const run = `rt${Date.now().toString(36)}`;
const exchange = `bench_${run}`;
const redisPrefix = `bench_${run}:`;
// What `npm start` runs (scripts/start.mjs); the path itself needs identity, crm, the connector, messaging and webhooks.
const allServices = ['identity', 'crm', 'chatnet-connector', 'messaging', 'webhooks', 'automation', 'ai'];
const pathServices = ['identity', 'crm', 'chatnet-connector', 'messaging', 'webhooks'];
const without = args.without ? args.without.split(',').filter(Boolean) : [];
const services = allServices.filter((s) => pathServices.includes(s) || !without.includes(s));
const dbName = Object.fromEntries(services.map((s) => [s, `bench_${s.replace(/-/g, '_')}_${run}`]));
const dbUrl = (service) => Object.assign(new URL(pgUrl), { pathname: `/${dbName[service]}` }).toString();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** The CPU column of the sandbox network process. */
const NETWORK = 'sandbox network';
async function waitHealthy(url, timeoutMs = 30_000) {
  const answers = () =>
    fetch(url)
      .then((r) => r.ok)
      .catch(() => false);
  for (const until = Date.now() + timeoutMs; !(await answers()); await sleep(200)) {
    if (Date.now() > until) throw new Error(`${url} did not answer`);
  }
}
const progress = (m) => process.stderr.write(`[bench:realtime] ${m}\n`);
const pct = (xs, p) => {
  if (!xs.length) return NaN;
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

// ---- what arrives: message.received webhooks, matched to the request that sent the message ----
const sentAt = new Map(); // content marker → performance.now() at send
const networkIds = new Map(); // content marker → the chatnetMessageId the connector answered
const phases = new Map(); // phase → { latencies, delivered:Set of messageIds, duplicates, last }
const phase = (name) => {
  if (!phases.has(name))
    phases.set(name, { latencies: [], delivered: new Set(), duplicates: 0, last: 0, accepted: 0, errors: 0, request: [], timeline: [] });
  return phases.get(name);
};
const receiver = webhookReceiver((event, now) => {
  if (event.type !== 'message.received') return;
  const content = event.data?.content ?? '';
  // `${phase}-${i}-${hex}`: a phase's name may hold hyphens itself (fault-baseline).
  const p = phase(content.split('-').slice(0, -2).join('-'));
  if (p.delivered.has(event.data.messageId)) {
    p.duplicates++;
    return;
  }
  p.delivered.add(event.data.messageId);
  p.last = now;
  const t0 = sentAt.get(content);
  if (t0 !== undefined) p.latencies.push(now - t0);
  if (t0 !== undefined) p.timeline.push([t0, 'hook', now - t0]);
});

// ---- the load: contacts write at the sandbox network's port (or the gateway's sandbox route: --inbound-via gateway) ----
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
let gatewayPort;
let networkPort;
let token;
let accountId;
/** The known contacts, in turn (they wrote once in the warm-up). */
const knownSender = (i) => `uid-${i % CONTACTS}`;
function inbound(name, i, sender = knownSender) {
  const p = phase(name);
  const uid = sender(i);
  const content = `${name}-${i}-${randomBytes(3).toString('hex')}`;
  const body = JSON.stringify({ fromUid: uid, fromName: `Contact ${uid}`, content });
  const t0 = performance.now();
  sentAt.set(content, t0);
  return new Promise((resolve) => {
    const r = http.request(
      {
        host: '127.0.0.1',
        port: VIA_GATEWAY ? gatewayPort : networkPort,
        path: VIA_GATEWAY ? `/sandbox/accounts/${accountId}/inbound` : `/accounts/${accountId}/inbound`,
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...(VIA_GATEWAY ? { authorization: `Bearer ${token}` } : {}),
        },
      },
      (res) => {
        let answer = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (answer += d));
        res.on('end', () => {
          // The network's id of the message (what the connector answered), to explain a message lost later.
          if (res.statusCode === 200) networkIds.set(content, JSON.parse(answer).chatnetMessageId);
          if (res.statusCode === 200) p.accepted++;
          else p.errors++;
          p.request.push(performance.now() - t0);
          p.timeline.push([t0, 'http', performance.now() - t0]);
          resolve();
        });
      },
    );
    r.on('error', () => {
      p.errors++;
      resolve();
    });
    r.end(body);
  });
}

/** Open loop: `rate` messages per second for `seconds`, whatever the answers' speed (no coordinated omission). */
async function openLoop(name, rate, seconds, during, duringAt = 1 / 3, sender = knownSender) {
  const total = Math.round(rate * seconds);
  const t0 = performance.now();
  const inflight = [];
  let hook = during;
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    if (hook && i >= total * duringAt) {
      inflight.push(hook());
      hook = undefined;
    }
    inflight.push(inbound(name, i, sender));
  }
  await Promise.all(inflight);
  return { total, started: t0 };
}

async function drain(name, timeoutMs) {
  const p = phase(name);
  const until = Date.now() + timeoutMs;
  let lastCount = -1;
  let stillSince = Date.now();
  while (p.delivered.size < p.accepted && Date.now() < until) {
    await sleep(100);
    if (p.delivered.size !== lastCount) [lastCount, stillSince] = [p.delivered.size, Date.now()];
    else if (Date.now() - stillSince > 30_000) break; // nothing moved for 30 s: count the rest as lost
  }
  return p.delivered.size;
}

function restartRabbit() {
  return (async () => {
    progress('restarting RabbitMQ (stop_app / start_app)');
    const t0 = Date.now();
    // Not execFileSync: the load generator must keep sending while the broker is away (a blocked loop would
    // send the missed seconds' messages in one burst afterwards and hide what users see).
    await promisify(execFile)('rabbitmqctl', ['stop_app']);
    await promisify(execFile)('rabbitmqctl', ['start_app']);
    progress(`RabbitMQ back after ${Date.now() - t0} ms`);
  })();
}

/**
 * --faults: a run at the fault rate for 35 s with nothing wrong, then 70 s with the faults a managed deployment sees,
 * each at a fixed second of sending, then 35 s with nothing wrong again (the two fault-free runs are the yardstick of
 * recovery). Returns RESULTS.md lines.
 */
const FAULT_SECONDS = 70;
async function faultRuns(measure, procs, snapshot) {
  const rate = Number(args['fault-rate']);
  await sleep(2000);
  // Where the CPU went, second by second, so a slow recovery shows which process (or the machine) was busy then.
  const timeline = cpuTimeline(snapshot);
  timeline.start();
  // The yardstick: the same rate with nothing wrong, half of the faults' run's length just before it and half just after
  // (recovery.mjs says why).
  const normal = await measure('fault-baseline', rate, FAULT_SECONDS / 2);
  const faults = [];
  // --fault-control: the same schedule with every fault left out (each "fault" only waits as long as the real one
  // lasts): how often the recovery test fails a run with nothing wrong in it on this machine.
  const control = args['fault-control'];
  const at = async (second, name, fn, lastsMs) => {
    await sleep(Math.max(0, t0 + second * 1000 - performance.now()));
    progress(`fault${control ? ' (control: not done)' : ''}: ${name}`);
    const start = performance.now();
    await (control ? sleep(lastsMs) : fn());
    faults.push({ name: control ? `${name}: not done (--fault-control)` : name, start, end: performance.now() });
  };
  let t0;
  const terminate = async () => {
    const { rows } = await admin.query(
      'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = ANY($1)',
      [Object.values(dbName)],
    );
    progress(`terminated ${rows[0].n} backends`);
  };
  const redisUrl = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const pauseRedis = async () => {
    execFileSync('redis-cli', ['-h', redisUrl.hostname, '-p', redisUrl.port || '6379', 'CLIENT', 'PAUSE', '5000']);
    await sleep(5000);
  };
  const during = async () => {
    t0 = performance.now();
    // 15 s apart: the slowest fault (a broker restart, ~7 s) still leaves more than the 10 s the target allows
    // for recovery before the next one (7 s apart, a recovery could not be seen).
    await at(5, 'every PostgreSQL backend terminated', terminate, 200);
    await at(20, 'every PostgreSQL backend terminated again', terminate, 200);
    await at(35, 'Redis paused for 5 s (CLIENT PAUSE)', pauseRedis, 5000);
    await at(50, 'RabbitMQ restarted (stop_app / start_app)', () => restartRabbit(), 5200);
  };
  const run = await measure('faults', rate, FAULT_SECONDS, during, 0);
  await sleep(2000);
  const normalAfter = await measure('fault-baseline-after', rate, FAULT_SECONDS / 2);
  await timeline.stop();
  const exited = Object.entries(procs)
    .filter(([, c]) => c.exitCode !== null || c.signalCode !== null)
    .map(([n, c]) => `${n} (${c.signalCode ?? c.exitCode})`);
  const hooksOf = (name) => phase(name).timeline.flatMap(([t, kind, ms]) => (kind === 'hook' ? [[t, ms]] : []));
  const yardstick = recoveryYardstick([normal, normalAfter].map((r) => ({ entries: hooksOf(r.name), started: r.started, seconds: r.seconds })));
  const hooks = hooksOf('faults');
  const judgeBetween = (from, until) =>
    yardstick.judge(
      hooks.filter(([t]) => t >= from && t < until).map(([, ms]) => ms),
      until - from,
    );
  // Recovery: the first whole second after a fault's end from which the messages sent until the next fault (or the end
  // of sending) are back under the normal p99 (recoveryYardstick, recovery.mjs). A message sent less than the normal
  // p99 before the next fault is still on its way when that fault strikes: it counts for the next fault, not this one.
  const endOfSending = run.started + FAULT_SECONDS * 1000;
  const before = (fault) => (fault ? fault.start - yardstick.p99 : endOfSending);
  const recovery = faults.map((fault, i) => {
    const until = before(faults[i + 1]);
    for (let k = 0; fault.end + k * 1000 < until; k++) {
      const verdict = judgeBetween(fault.end + k * 1000, until);
      if (verdict.backUnder) return { k, ...verdict };
    }
    return undefined;
  });
  // A window with no fault in it, judged the same way: the seconds before the first fault.
  const beforeFirst = judgeBetween(run.started, before(faults[0]));
  const pctOf = (share) => `${f(100 * share, 1)}%`;
  const lostOrTwice = [normal, run, normalAfter].reduce((n, r) => n + r.lost + r.twice, 0);
  const met = exited.length === 0 && lostOrTwice === 0 && recovery.every((r) => r !== undefined && r.k <= 10);
  return [
    `Faults (\`--faults\`${control ? ' --fault-control: none of them done, a control of the test' : ''}): ${rate} msg/s; the normal p99 is that of two runs at ${rate} msg/s without faults, ${normal.seconds} s just before and ${normalAfter.seconds} s just after (${f(yardstick.p99)} ms; p99 before ${f(normal.p99)} ms, after ${f(normalAfter.p99)} ms; lost ${normal.lost + normalAfter.lost}, applied twice ${normal.twice + normalAfter.twice}). ` +
      `The messages sent from a second after a fault until the next one are back under it when no larger share of them goes over it than in the worst stretch of as many seconds of those runs ` +
      `(bench/realtime/recovery.mjs: judged by the window's p99 alone, or against normal messages drawn one by one, windows with no fault in them failed). ` +
      `During ${FAULT_SECONDS} s at ${rate} msg/s: accepted ${run.accepted} of ${run.sent} (refused while a dependency was away: ${run.errors}), delivered ${run.delivered}, lost ${run.lost}, applied twice ${run.twice}, p99 ${f(run.p99)} ms; processes that exited: ${exited.length ? exited.join(', ') : 'none'}.`,
    '',
    '| fault (second of sending) | lasted ms | back under the normal p99 after | share over it from then (worst normal stretch as long) |',
    '|---|---|---|---|',
    `| none: the ${f((faults[0].start - run.started) / 1000, 0)} s before the first fault (a control of the test) | 0 | ${beforeFirst.backUnder ? 'under it' : '**not under it**'} | ${pctOf(beforeFirst.share)} (${pctOf(beforeFirst.normalWorst)}) |`,
    ...faults.map((fa, i) => {
      const r = recovery[i];
      return `| ${fa.name} (${f((fa.start - run.started) / 1000, 0)} s) | ${f(fa.end - fa.start, 0)} | ${r === undefined ? 'not before the next fault' : `${r.k} s`} | ${r === undefined ? '' : `${pctOf(r.share)} (${pctOf(r.normalWorst)})`} |`;
    }),
    '',
    `Target: no process exits, nothing lost or applied twice, back under the normal p99 within 10 s of each fault: **${met ? 'met' : 'NOT met'}**.`,
    '',
    ...cpuAroundFaults(timeline, [normal, normalAfter], faults),
  ];
}

/**
 * The CPU table of --faults: the baseline's seconds, and the 10 s after each fault (where its recovery is judged), as %
 * of one core for the busiest processes, with the machine's busy and steal time (% of all its cores). A recovery slower
 * than the fault's own work shows here as one process (a backlog) or the whole machine (busy without us, or stolen).
 */
function cpuAroundFaults(timeline, [before, after], faults) {
  const windows = [
    ['fault-free run before', timeline.window(before.started, before.started + before.seconds * 1000)],
    ...faults.map((fa) => [`${fa.name}: its 10 s after`, timeline.window(fa.end, fa.end + 10_000)]),
    ['fault-free run after', timeline.window(after.started, after.started + after.seconds * 1000)],
  ].filter(([, w]) => w);
  if (!windows.length) return [];
  const total = {};
  for (const [, w] of windows) for (const [label, pct] of Object.entries(w.byLabel)) total[label] = (total[label] ?? 0) + pct;
  const busiest = Object.keys(total)
    .filter((l) => l !== 'load generator')
    .sort((a, b) => total[b] - total[a])
    .slice(0, 8);
  return [
    'CPU while the faults run, % of one core by process (the busiest eight; /proc, sampled every second), and the machine: busy and steal (time the host gave to others), % of all its cores:',
    '',
    `| window | ${busiest.join(' | ')} | machine busy | steal |`,
    `|---|${busiest.map(() => '---|').join('')}---|---|`,
    ...windows.map(([name, w]) => `| ${name} | ${busiest.map((l) => f(w.byLabel[l] ?? 0, 0)).join(' | ')} | ${f(w.busy, 0)} | ${f(w.steal, 1)} |`),
    '',
  ];
}

const runLabel = { sustained: 'sustained (known contacts)', fresh: 'new senders', restart: 'RabbitMQ restarted at 1/3' };

/** Issue #28 item 6's targets for this run, as ratios to the bare pipeline and to the known-contact path. */
function issue28Targets({ main, fresh, unlinked, bare, withoutShared }) {
  const lines = ['Targets of issue #28 (item 6), measured in this run:', ''];
  const delivered = main.perSecond / main.rate;
  const sendingOk = delivered >= 0.95 && main.lost === 0;
  lines.push(
    `- ${main.rate} msg/s for ${main.seconds} s: delivered ${f(100 * delivered, 0)}% of the offered rate while sending, lost ${main.lost}: **${sendingOk ? 'met' : 'NOT met'}** (≥ 95%, none lost).`,
  );
  if (bare) {
    const ratio = withoutShared(main.cpu) / bare.services;
    lines.push(
      `- CPU per message (services and their PostgreSQL) ${f(withoutShared(main.cpu), 2)} ms, ${f(ratio, 2)}× the bare pipeline's ${f(bare.services, 2)} ms: **${ratio <= 2 ? 'met' : 'NOT met'}** (≤ 2×).`,
    );
  } else lines.push('- CPU against the bare pipeline: not measured (run with --bare).');
  if (fresh) {
    const ratio = withoutShared(fresh.cpu) / withoutShared(main.cpu);
    lines.push(
      `- New senders at ${fresh.rate} msg/s: CPU per message ${f(withoutShared(fresh.cpu), 2)} ms, ${f(ratio, 2)}× the known-contact path's: **${ratio <= 1.5 ? 'met' : 'NOT met'}** (≤ 1.5×); ` +
        `conversations stored without their contact: ${unlinked}: **${unlinked === 0 ? 'met' : 'NOT met'}**; delivered ${fresh.delivered} of ${fresh.accepted}, p99 ${f(fresh.p99)} ms.`,
    );
  }
  lines.push('');
  return lines;
}

const group = processGroup();
const admin = new pg.Pool({ connectionString: pgUrl, max: 2 });
admin.on('error', () => undefined);
let messagingDb;
const sections = [];
try {
  if (args['pg-statements'] && !(await statementsAvailable(admin)))
    throw new Error('--pg-statements: pg_stat_statements is not loaded (see bench/lib/pg-statements.mjs)');
  // The bare pipeline first, on the machine as it is now, before our stack's processes start.
  if (args.bare) progress(`bare pipeline: ${RATE} msg/s for ${SECONDS} s`);
  const bare = args.bare ? await runBare({ rate: RATE, seconds: SECONDS, pgUrl, amqpUrl, contacts: CONTACTS }) : undefined;
  if (bare)
    progress(`bare pipeline: delivered ${bare.delivered}/${bare.accepted} (${f(bare.perSecond, 0)}/s), p50 ${f(bare.p50)} ms, p99 ${f(bare.p99)} ms`);
  for (const db of Object.values(dbName)) await admin.query(`CREATE DATABASE "${db}"`);
  const hookUrl = await receiver.listen();
  const ports = Object.fromEntries(await Promise.all([...services, 'gateway'].map(async (s) => [s, await freePort()])));
  gatewayPort = ports.gateway;
  networkPort = await freePort();
  const common = wholeStackEnv({ amqpUrl, exchange, redisPrefix, ports, extra: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1' } });
  const pids = {};
  const procs = {};
  // The outside network first: the connector's sessions dial it as they would the real one.
  const network = group.launch(
    'chatnet-sandbox',
    { ...common, SANDBOX_PORT: String(networkPort), REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' },
    { main: path.join('services', 'chatnet-connector', 'dist', 'sandbox-network', 'main.js') },
  );
  pids[NETWORK] = network.pid;
  procs[NETWORK] = network;
  await waitHealthy(`http://127.0.0.1:${networkPort}/healthz`);
  for (const s of services) {
    const child = group.launch(s, {
      ...common,
      DATABASE_URL: dbUrl(s),
      GRPC_PORT: String(ports[s]),
      ...(s === 'chatnet-connector' ? { CHATNET_DRIVER: 'sandbox', CHATNET_SANDBOX_URL: `http://127.0.0.1:${networkPort}` } : {}),
      ...(s === 'messaging' ? { ATTACHMENTS_DIR: path.join(os.tmpdir(), `bench-${run}`) } : {}),
    });
    pids[s] = child.pid;
    procs[s] = child;
  }
  const gw = group.launch('gateway', {
    ...common,
    HOST: '127.0.0.1',
    PORT: String(ports.gateway),
    SERVICES: services.join(','),
    // The bench's own limit: one user sends every message (the default per-user limit stays as it is).
    RATE_LIMIT_USER_PER_MINUTE: '100000000',
  });
  pids.gateway = gw.pid;
  procs.gateway = gw;
  const url = `http://127.0.0.1:${ports.gateway}`;
  await waitReady(url);
  messagingDb = new pg.Pool({ connectionString: dbUrl('messaging'), max: 2 });
  // --faults terminates every backend of the run's databases, the bench's own idle ones too: not a reason to exit.
  messagingDb.on('error', () => undefined);

  const signup = await signupOrg(url, run, 'Realtime');
  token = signup.token;
  const api = async (method, p, body) => {
    const r = await fetch(`${url}${p}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: body && JSON.stringify(body),
    });
    return { status: r.status, body: await r.json().catch(() => undefined) };
  };
  const hook = await api('POST', '/api/v1/webhook-settings', { url: hookUrl, events: ['message.received'] });
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.body)}`);
  receiver.setSecret(hook.body.secret);
  accountId = (await api('POST', '/api/v1/chatnet-accounts', { displayName: 'Bench line' })).body.id;
  if ((await api('POST', `/api/v1/chatnet-accounts/${accountId}/login`)).status !== 200) throw new Error('login failed');
  const scan = await api('POST', `/sandbox/accounts/${accountId}/scan`, {});
  if (scan.body?.status !== 'connected') throw new Error(`scan: ${JSON.stringify(scan.body)}`);

  // Warm-up, not reported: every contact writes once (contact in crm, conversation in messaging), JIT and pools warm.
  progress('warm-up');
  await openLoop('warm', 100, CONTACTS / 100);
  await drain('warm', 60_000);

  const measure = async (name, rate, seconds, during, duringAt, sender) => {
    progress(`${name}: ${rate} msg/s for ${seconds} s`);
    const cpu0 = await cpuSnapshot({ processes: pids, dbs: dbName, pool: admin });
    const commits0 = await commitSnapshot({ dbs: dbName, pool: admin });
    if (args['pg-statements']) await resetStatements(admin);
    const { total, started } = await openLoop(name, rate, seconds, during, duringAt, sender);
    const delivered = await drain(name, 120_000);
    const cpu = cpuPerUnit(cpu0, await cpuSnapshot({ processes: pids, dbs: dbName, pool: admin }), delivered);
    await sleep(1500); // the statistics counters are flushed about once a second
    const commits = commitsPerUnit(commits0, await commitSnapshot({ dbs: dbName, pool: admin }), delivered);
    const statements = args['pg-statements'] ? await topStatements(admin, dbName, delivered, Number(process.env.BENCH_PG_TOP ?? 8)) : [];
    const p = phase(name);
    const { rows } = await messagingDb.query(
      'SELECT count(*)::int AS n, count(DISTINCT chatnet_message_id)::int AS d FROM messages WHERE content LIKE $1',
      [`${name}-%`],
    );
    const r = {
      name,
      started,
      rate,
      seconds,
      sent: total,
      accepted: p.accepted,
      errors: p.errors,
      delivered,
      lost: p.accepted - delivered,
      twice: p.duplicates + (rows[0].n - rows[0].d),
      perSecond: (delivered * 1000) / Math.max(1, p.last - started),
      p50: pct(p.latencies, 50),
      p99: pct(p.latencies, 99),
      req99: pct(p.request, 99),
      cpu,
      commits,
      statements,
    };
    if (p.accepted > delivered) await explainLost(name, p);
    if (args.timeline) printTimeline(name, p, started);
    progress(
      `${name}: delivered ${delivered}/${p.accepted} (${f(r.perSecond, 0)}/s), p50 ${f(r.p50)} ms, p99 ${f(r.p99)} ms, lost ${r.lost}, twice ${r.twice}`,
    );
    return r;
  };
  /** --timeline: per second of sending, the HTTP and webhook latencies of the messages sent in it (a stall shows). */
  const printTimeline = (name, p, started) => {
    const bySecond = new Map();
    for (const [t0, kind, ms] of p.timeline) {
      const s = Math.floor((t0 - started) / 1000);
      if (!bySecond.has(s)) bySecond.set(s, { http: [], hook: [] });
      bySecond.get(s)[kind].push(ms);
    }
    for (const [s, { http: h, hook }] of [...bySecond].sort((a, b) => a[0] - b[0])) {
      progress(
        `${name} t=${s}s: sent ${h.length}, HTTP p50 ${f(pct(h, 50))} p99 ${f(pct(h, 99))} ms, webhook p50 ${f(pct(hook, 50))} p99 ${f(pct(hook, 99))} ms`,
      );
    }
  };
  /** Where each lost message stopped: stored by messaging or not, and its webhook delivery's state. */
  const explainLost = async (name, p) => {
    const delivered = new Set();
    for (const [content] of sentAt) if (content.startsWith(`${name}-`)) delivered.add(content);
    const { rows: stored } = await messagingDb.query('SELECT id, content FROM messages WHERE content LIKE $1', [`${name}-%`]);
    const storedBy = new Map(stored.map((r) => [r.content, r.id]));
    const hooks = new pg.Pool({ connectionString: dbUrl('webhooks'), max: 1 });
    try {
      for (const content of delivered) {
        const id = storedBy.get(content);
        if (id && p.delivered.has(id)) continue;
        const { rows } = id
          ? await hooks.query(
              'SELECT status, attempts, next_attempt_at, last_status_code, last_error FROM webhook_deliveries WHERE payload LIKE $1',
              [`%${id}%`],
            )
          : { rows: [] };
        const networkId = networkIds.get(content);
        const { rows: same } = await messagingDb.query('SELECT id, content FROM messages WHERE chatnet_message_id = $1', [networkId]);
        progress(
          `lost: ${content} (network id ${networkId}): ${id ? `stored as ${id}` : 'not stored by messaging'}; delivery: ${rows.length ? JSON.stringify(rows) : 'none'}; ` +
            `messages with its network id: ${JSON.stringify(same)}`,
        );
      }
    } finally {
      await hooks.end();
    }
  };
  const results = [await measure('sustained', RATE, SECONDS)];
  // New senders (a burst of new leads): every message from a sender never seen, so each makes a contact in crm and a
  // conversation in messaging. Nothing may stay stored without its contact once crm has linked it.
  const newSenderRate = args['new-sender-rate'] === '' ? RATE : Number(args['new-sender-rate']);
  let unlinked;
  if (newSenderRate > 0) {
    await sleep(2000);
    results.push(await measure('fresh', newSenderRate, SECONDS, undefined, undefined, (i) => `fresh-${i}`));
    for (let tries = 0; tries < 100; tries++) {
      const { rows } = await messagingDb.query(
        "SELECT count(*) FILTER (WHERE contact_id IS NULL)::int AS n FROM conversations WHERE contact_chatnet_uid LIKE 'fresh-%'",
      );
      unlinked = rows[0].n;
      if (unlinked === 0) break;
      await sleep(200);
    }
    progress(`new senders' conversations without their contact after 20 s at most: ${unlinked}`);
  }
  if (args['rabbit-restart']) {
    await sleep(2000);
    results.push(await measure('restart', Number(args['restart-rate']), SECONDS, restartRabbit));
  }
  const faultLines = args.faults ? await faultRuns(measure, procs, () => cpuSnapshot({ processes: pids, dbs: dbName, pool: admin })) : [];

  // A fixed column order (snapshots list processes in whatever order PostgreSQL reports its backends).
  const order = [...services, 'gateway', ...services.map((s) => `pg ${s}`), 'rabbitmq', 'redis', NETWORK, 'load generator'];
  const labels = order.filter((l) => l in results[0].cpu);
  // The load generator and the sandbox network play the outside world: shown, never counted as ours.
  const ours = (cpu) =>
    Object.entries(cpu)
      .filter(([k]) => k !== 'load generator' && k !== NETWORK)
      .reduce((a, [, v]) => a + (Number.isFinite(v) ? v : 0), 0);
  const withoutShared = (cpu) => ours(cpu) - (cpu.rabbitmq ?? 0) - (cpu.redis ?? 0);
  const main = results[0];
  const fresh = results.find((r) => r.name === 'fresh');
  const restart = results.find((r) => r.name === 'restart');
  const met = main.perSecond >= RATE * 0.97 && main.p99 < 100 && main.lost === 0 && main.twice === 0;
  sections.push(
    '## realtime',
    '',
    `Command: \`node bench/realtime/run.mjs --rate ${RATE} --seconds ${SECONDS}${VIA_GATEWAY ? ' --inbound-via gateway' : ''}${args['rabbit-restart'] ? ' --rabbit-restart' : ''}${args.bare ? ' --bare' : ''}${args.without ? ` --without ${args.without}` : ''}${args.faults ? ' --faults' : ''}${args['pg-statements'] ? ' --pg-statements' : ''} --write\`. ` +
      `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${os.cpus().length} cores; load average before the run ${LOAD_BEFORE.map((l) => l.toFixed(2)).join(' ')}, 1-minute at the end ${os.loadavg()[0].toFixed(1)}.`,
    '',
    (VIA_GATEWAY
      ? "Path (`--inbound-via gateway`): `POST /sandbox/accounts/:id/inbound` through the gateway → chatnet-connector → the sandbox network process → back over the account's WebSocket to the connector (`chatnet.inbound`)"
      : "Path: `POST /accounts/:id/inbound` at the sandbox network's own process (the outside network; not our gateway) → over the account's WebSocket to chatnet-connector (`chatnet.inbound`)") +
      ' → RabbitMQ → messaging (message row, conversation, `message.received`, outbox) → RabbitMQ → webhooks → signed POST to a receiver in the load generator, which verifies every signature. ' +
      `Processes: ${[...services, 'gateway'].join(', ')} (each from dist), the sandbox network, PostgreSQL, RabbitMQ, Redis and the load generator, all on this machine. ${CONTACTS} contacts write in turn after a warm-up that is not reported. ` +
      'Latency = webhook received − request sent, one clock. Lost = accepted (HTTP 200) but never delivered; applied twice = a message delivered more than once or stored twice.',
    '',
    '| run | offered msg/s | sent | accepted | delivered | delivered msg/s | p50 ms | p99 ms | HTTP p99 ms | lost | applied twice | errors |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${runLabel[r.name]} | ${r.rate} | ${r.sent} | ${r.accepted} | ${r.delivered} | ${f(r.perSecond, 0)} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.req99)} | ${r.lost} | ${r.twice} | ${r.errors} |`,
    ),
    '',
    "CPU milliseconds per delivered message, by process (utime + stime from /proc; pg = the PostgreSQL backends of that service's database; rabbitmq and redis serve only this run when the machine is otherwise quiet; the sandbox network and the load generator play the outside world and are not in the totals):",
    '',
    `| run | ${labels.join(' | ')} | services + pg | all but the load generator |`,
    `|---|${labels.map(() => '---|').join('')}---|---|`,
    ...results.map((r) => `| ${r.name} | ${labels.map((l) => f(r.cpu[l], 2)).join(' | ')} | ${f(withoutShared(r.cpu), 2)} | ${f(ours(r.cpu), 2)} |`),
    '',
    ...(bare
      ? [
          'The bare pipeline at the same rate, measured first in the same run (bench/realtime/bare.mjs: an HTTP ingress committing the message and its event, an outbox relay woken by NOTIFY publishing with confirms to a quorum queue, a consumer applying each batch in one transaction with its idempotency rows and POSTing a signed webhook; three node processes, PostgreSQL, RabbitMQ and the load generator). CPU: its processes and PostgreSQL backends, then with RabbitMQ:',
          '',
          ...bareTableHead,
          bareRow('bare pipeline', bare),
          bareRow('our path (sustained, above)', {
            ...main,
            duplicates: main.twice,
            services: withoutShared(main.cpu),
            all: withoutShared(main.cpu) + (main.cpu.rabbitmq ?? 0),
          }),
          '',
          `Our path against the bare pipeline: **${f((100 * main.perSecond) / bare.perSecond, 0)}%** of its delivered msg/s, **${f(withoutShared(main.cpu) / bare.services, 2)}×** its CPU per message (processes + PostgreSQL).`,
          '',
        ]
      : []),
    'PostgreSQL transactions committed per delivered message, by database (pg_stat_database.xact_commit; a round trip costs more than its rows on this machine):',
    '',
    `| run | ${services.join(' | ')} |`,
    `|---|${services.map(() => '---|').join('')}`,
    ...results.map((r) => `| ${r.name} | ${services.map((s) => f(r.commits[s], 2)).join(' | ')} |`),
    '',
    ...(args['pg-statements']
      ? [
          'Costliest statements (pg_stat_statements; execution time, without planning or the client side), per delivered message:',
          '',
          '| run | database | statement | ms | calls | WAL records |',
          '|---|---|---|---|---|---|',
          ...results.flatMap((r) =>
            r.statements.map(
              (st) =>
                `| ${r.name} | ${st.db} | \`${st.query.slice(0, 90).replace(/\|/g, '\\|')}…\` | ${f(st.msPerUnit, 3)} | ${f(st.callsPerUnit, 2)} | ${f(st.walPerUnit, 1)} |`,
            ),
          ),
          '',
        ]
      : []),
    ...faultLines,
    `Invalid signatures: ${receiver.stats.badSignatures}; attempts made again with the same webhook-id (at least once, skipped as a Standard Webhooks receiver does): ${receiver.stats.duplicateIds}. Target ≥ ${RATE} msg/s for ${SECONDS} s with p99 < 100 ms, 0 lost, 0 applied twice: **${met ? 'met' : 'NOT met'}**; ` +
      `CPU per message ≤ 2.5 ms (services + their PostgreSQL backends): **${withoutShared(main.cpu) <= 2.5 ? 'met' : 'NOT met'}** (${f(withoutShared(main.cpu), 2)} ms).` +
      (restart
        ? ` RabbitMQ restart at ${restart.rate} msg/s: lost ${restart.lost}, applied twice ${restart.twice}: **${restart.lost === 0 && restart.twice === 0 ? 'met' : 'NOT met'}**.`
        : ''),
    '',
    ...issue28Targets({ main, fresh, unlinked, bare, withoutShared }),
    '',
  );
  const section = sections.join('\n');
  console.log(section);
  if (args.write) writeResultsSection(path.join(root, 'bench', 'RESULTS.md'), 'realtime', section, { keepEarlier: true });
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  agent.destroy();
  receiver.close();
  await messagingDb?.end().catch(() => undefined);
  await group.stopAll().catch(() => undefined);
  for (const db of Object.values(dbName)) await admin.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`).catch(() => undefined);
  await admin.end();
  const { deleteRabbitPrefix, clearRedisPrefix } = require('@crm/testing');
  await deleteRabbitPrefix(amqpUrl, exchange).catch(() => undefined);
  await clearRedisPrefix(redisPrefix).catch(() => undefined);
  process.exit(process.exitCode ?? 0);
}
