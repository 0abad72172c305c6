// bench/npm-start: the product the way a user starts it (`npm start`: every service, the gateway on one port, the
// sandbox network), measured from outside through the gateway only, as issue #28 item 6 states its targets:
//   - known contacts: 100 msg/s for 10 s through POST /sandbox/accounts/:id/inbound → message.received webhook, p99 < 250 ms;
//   - new senders: 50 msg/s for 10 s, every message from a sender never seen, p99 < 500 ms, and every conversation
//     ends up with its contact (nothing stored without its contact);
//   - public contact creates: 200/s for 10 s through POST /api/public/contacts → contact.created webhook, p99 < 250 ms.
// Latency = webhook received − request sent, one clock (this process). Lost = accepted but never delivered.
//
// Usage: node bench/npm-start/run.mjs [--write] [--url http://127.0.0.1:8080] [--timeline]
//   Without --url it runs `npm start` itself (scripts/start.mjs, which installs what is missing and builds) with
//   SIGNUP_ENABLED=true (the bench signs up its organizations) and WEBHOOK_ALLOWED_PRIVATE_ADDRESSES=127.0.0.1 (its
//   webhook receivers listen on this machine), and stops it at the end. Nothing else differs from a user's start:
//   rate limits and every other default stay as they are, so the load is spread the way real traffic is (the public
//   creates over four organizations' keys, 50/s each, under the default 600/min per key).
//   With --url it measures a stack already running there (started with those two settings).
//   It uses `npm start`'s fixed ports and databases: do not run it beside another `npm start`.
//   Each run's CPU per request is measured by process (/proc; the services found by their command line, their
//   PostgreSQL backends by npm start's database names), as issue #28 item 7 asks where a target is missed; not with --url.
//   --timeline prints, per half second of sending, the requests sent in it and their worst HTTP and webhook latency
//   (where a p99 comes from: a stall, or the load throughout).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { cpuPerUnit, cpuSnapshot } from '../lib/cpu.mjs';
import { root, waitReady } from '../lib/processes.mjs';
import { writeResultsSection } from '../lib/results.mjs';
import { webhookReceiver } from '../lib/webhook-receiver.mjs';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string', default: '' },
    write: { type: 'boolean', default: false },
    'known-rate': { type: 'string', default: '100' },
    'new-rate': { type: 'string', default: '50' },
    'contacts-rate': { type: 'string', default: '200' },
    seconds: { type: 'string', default: '10' },
    timeline: { type: 'boolean', default: false },
  },
});
const SECONDS = Number(args.seconds);
// Before anything starts: a run on a busy machine shows as one (issue #28: each run's load average shown).
const LOAD_BEFORE = os.loadavg();
const KNOWN_CONTACTS = 200;
const PUBLIC_ORGS = 4;
const require = createRequire(path.join(root, 'packages', 'events', 'package.json'));
const pg = require('pg');
const pgUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const run = `ns${Date.now().toString(36)}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const progress = (m) => process.stderr.write(`[bench:npm-start] ${m}\n`);
const pct = (xs, p) => {
  if (!xs.length) return NaN;
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

// ---- the stack: `npm start` as a user runs it, or one already running ----
let stack;
let url = args.url;
if (!url) {
  progress('npm start (scripts/start.mjs)…');
  stack = spawn(process.execPath, [path.join(root, 'scripts', 'start.mjs')], {
    cwd: root,
    env: { ...process.env, SIGNUP_ENABLED: 'true', WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let tail = '';
  const keep = (d) => (tail = (tail + d).slice(-4000));
  stack.stdout.on('data', keep);
  stack.stderr.on('data', keep);
  stack.on('exit', (code) => code && progress(`npm start exited ${code}:\n${tail}`));
  url = `http://127.0.0.1:${process.env.PORT ?? 8080}`;
}
const stopStack = async () => {
  if (!stack || stack.exitCode !== null) return;
  process.kill(-stack.pid, 'SIGTERM');
  await new Promise((r) => stack.once('exit', r));
};

// ---- what arrives ----
const phases = new Map();
const phase = (name) => {
  if (!phases.has(name))
    phases.set(name, { sentAt: new Map(), latencies: [], delivered: new Set(), accepted: 0, errors: 0, statuses: {}, request: [], timeline: [] });
  return phases.get(name);
};
/** A webhook receiver per organization (each endpoint has its own secret); `markerOf` names the request an event answers. */
async function receiverFor(markerOf) {
  const rx = webhookReceiver((event, now) => {
    const marker = markerOf(event);
    if (!marker) return;
    const p = phase(marker.split('-')[0]);
    const t0 = p.sentAt.get(marker);
    if (t0 === undefined || p.delivered.has(marker)) return;
    p.delivered.add(marker);
    p.latencies.push(now - t0);
    p.timeline.push([t0, 'hook', now - t0]);
  });
  return { rx, url: await rx.listen() };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
function post(p, { path: to, headers, body, marker }) {
  const text = JSON.stringify(body);
  const t0 = performance.now();
  p.sentAt.set(marker, t0);
  const u = new URL(to, url);
  return new Promise((resolve) => {
    const r = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          p.request.push(performance.now() - t0);
          p.timeline.push([t0, 'http', performance.now() - t0]);
          p.statuses[res.statusCode] = (p.statuses[res.statusCode] ?? 0) + 1;
          if (res.statusCode >= 200 && res.statusCode < 300) p.accepted++;
          else p.errors++;
          resolve();
        });
      },
    );
    r.on('error', () => {
      p.errors++;
      resolve();
    });
    r.end(text);
  });
}

/** Open loop: `rate` requests per second for `seconds`, whatever the answers' speed (no coordinated omission). */
async function openLoop(rate, seconds, send) {
  const total = Math.round(rate * seconds);
  const t0 = performance.now();
  const inflight = [];
  for (let i = 0; i < total; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait > 1) await sleep(wait);
    inflight.push(send(i));
  }
  await Promise.all(inflight);
  return total;
}

async function drain(name, timeoutMs = 60_000) {
  const p = phase(name);
  const until = Date.now() + timeoutMs;
  while (p.delivered.size < p.accepted && Date.now() < until) await sleep(100);
  return p.delivered.size;
}

async function api(token, method, to, body, extra = {}) {
  const r = await fetch(`${url}${to}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...extra },
    body: body && JSON.stringify(body),
  });
  return { status: r.status, body: await r.json().catch(() => undefined) };
}
async function signup(name) {
  const r = await fetch(`${url}/api/v1/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      orgName: name,
      fullName: 'Bench Owner',
      email: `bench.${run}.${name.toLowerCase().replace(/\W/g, '')}@example.test`,
      password: 'correct horse battery',
    }),
  });
  if (r.status !== 201) throw new Error(`signup ${r.status}: ${await r.text()} (the stack needs SIGNUP_ENABLED=true)`);
  return r.json();
}

/** The stack's node processes by service (their command line names services/<name>/dist/main.js). */
function stackProcesses() {
  const out = {};
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const m = readFileSync(`/proc/${d}/cmdline`, 'utf8').match(/services\/([\w-]+)\/dist\/main\.js/);
      if (m) out[m[1]] = Number(d);
    } catch {
      /* gone */
    }
  }
  return out;
}

const serverDb = new pg.Pool({ connectionString: pgUrl, max: 1 });
/** A CPU snapshot of the stack `npm start` runs here (undefined for a stack elsewhere: --url). */
async function cpuNow() {
  if (args.url) return undefined;
  const processes = stackProcesses();
  const dbs = Object.fromEntries(Object.keys(processes).map((name) => [name, `crm_${name.replace(/-/g, '_')}`]));
  return cpuSnapshot({ processes, dbs, pool: serverDb });
}

const receivers = [];
const messagingDb = new pg.Pool({ connectionString: Object.assign(new URL(pgUrl), { pathname: '/crm_messaging' }).toString(), max: 1 });
const summary = (name, offered, sent) => {
  const p = phase(name);
  return {
    name,
    offered,
    sent,
    accepted: p.accepted,
    delivered: p.delivered.size,
    lost: p.accepted - p.delivered.size,
    errors: p.errors,
    statuses: p.statuses,
    p50: pct(p.latencies, 50),
    p99: pct(p.latencies, 99),
    req99: pct(p.request, 99),
  };
};
/**
 * CPU ms per request sent, by process, for each run: the services, their PostgreSQL backends, then RabbitMQ and Redis
 * (shared by the machine) and the load generator, with the services and their PostgreSQL summed (issue #28's measure).
 */
function cpuTable(results) {
  const measured = results.filter((r) => r.cpu);
  if (measured.length === 0) return [];
  const labels = [...new Set(measured.flatMap((r) => Object.keys(r.cpu)))];
  const outside = ['rabbitmq', 'redis', 'load generator'];
  const order = [
    ...labels.filter((l) => !l.startsWith('pg ') && !outside.includes(l)).sort(),
    ...labels.filter((l) => l.startsWith('pg ')).sort(),
    ...outside.filter((l) => labels.includes(l)),
  ];
  const own = (r) => order.filter((l) => !outside.includes(l)).reduce((sum, l) => sum + (r.cpu[l] ?? 0), 0);
  return [
    "CPU milliseconds per request sent, by process (utime + stime from /proc between the start of sending and 0.5 s after the last delivery; pg = the PostgreSQL backends of that service's database; RabbitMQ and Redis serve only this stack when the machine is otherwise quiet):",
    '',
    `| run | ${order.join(' | ')} | services + pg |`,
    `|---|${order.map(() => '---|').join('')}---|`,
    ...measured.map((r) => `| ${r.name} | ${order.map((l) => f(r.cpu[l], 2)).join(' | ')} | ${f(own(r), 2)} |`),
    '',
  ];
}

let exitCode = 0;
try {
  await waitReady(url, 300_000);
  progress(`stack ready at ${url}`);

  // Messages: one organization with a connected sandbox account and a message.received webhook.
  const owner = await signup(`Messages ${run}`);
  const inbox = await receiverFor((e) => (e.type === 'message.received' ? e.data?.content : undefined));
  receivers.push(inbox.rx);
  const hook = await api(owner.token, 'POST', '/api/v1/webhook-settings', { url: inbox.url, events: ['message.received'] });
  if (hook.status !== 201)
    throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.body)} (the stack needs WEBHOOK_ALLOWED_PRIVATE_ADDRESSES=127.0.0.1)`);
  inbox.rx.setSecret(hook.body.secret);
  const accountId = (await api(owner.token, 'POST', '/api/v1/chatnet-accounts', { displayName: 'Bench line' })).body.id;
  if ((await api(owner.token, 'POST', `/api/v1/chatnet-accounts/${accountId}/login`)).status !== 200) throw new Error('login failed');
  const scan = await api(owner.token, 'POST', `/sandbox/accounts/${accountId}/scan`, {});
  if (scan.body?.status !== 'connected') throw new Error(`scan: ${JSON.stringify(scan.body)}`);
  const inbound = (name, uid) => (i) => {
    const content = `${name}-${i}-${randomBytes(3).toString('hex')}`;
    return post(phase(name), {
      path: `/sandbox/accounts/${accountId}/inbound`,
      headers: { authorization: `Bearer ${owner.token}` },
      body: { fromUid: uid(i), fromName: `Sender ${uid(i)}`, content },
      marker: content,
    });
  };

  // Public contact creates: four organizations, each with its API key and a contact.created webhook.
  const keys = [];
  for (let k = 0; k < PUBLIC_ORGS; k++) {
    const o = await signup(`Contacts ${k} ${run}`);
    const rx = await receiverFor((e) => (e.type === 'contact.created' ? e.data?.contact?.fullName : undefined));
    receivers.push(rx.rx);
    const h = await api(o.token, 'POST', '/api/v1/webhook-settings', { url: rx.url, events: ['contact.created'] });
    if (h.status !== 201) throw new Error(`webhook: ${h.status} ${JSON.stringify(h.body)}`);
    rx.rx.setSecret(h.body.secret);
    const key = await api(o.token, 'POST', '/api/v1/settings/api-key/generate');
    if (key.status !== 201) throw new Error(`api key: ${key.status} ${JSON.stringify(key.body)}`);
    keys.push(key.body.apiKey ?? key.body.key);
  }
  const createContact = (name) => (i) => {
    const marker = `${name}-${i}-${randomBytes(3).toString('hex')}`;
    return post(phase(name), { path: '/api/public/contacts', headers: { 'x-api-key': keys[i % keys.length] }, body: { fullName: marker }, marker });
  };

  // Warm-up, not reported: the known contacts write once (contact, conversation), JIT and pools warm.
  progress(`warm-up: ${KNOWN_CONTACTS} contacts write once, 50 public creates`);
  await openLoop(
    50,
    KNOWN_CONTACTS / 50,
    inbound('warm', (i) => `known-${i}`),
  );
  await openLoop(25, 2, createContact('warmc'));
  await drain('warm');
  await drain('warmc');
  await sleep(2000);

  /** --timeline: per half second of sending, the requests sent in it and their worst HTTP and webhook latency. */
  const printTimeline = (name) => {
    const spans = new Map();
    const { timeline } = phase(name);
    const started = Math.min(...timeline.map(([t0]) => t0));
    for (const [t0, kind, ms] of timeline) {
      const at = Math.floor((t0 - started) / 500) / 2;
      if (!spans.has(at)) spans.set(at, { http: [], hook: [] });
      spans.get(at)[kind].push(ms);
    }
    for (const [at, { http: h, hook }] of [...spans].sort((a, b) => a[0] - b[0]))
      progress(`${name} t=${at.toFixed(1)}s: sent ${h.length}, worst HTTP ${f(Math.max(...h))} ms, worst webhook ${f(Math.max(...hook))} ms`);
  };

  const results = [];
  const measure = async (name, rate, send) => {
    progress(`${name}: ${rate}/s for ${SECONDS} s`);
    const before = await cpuNow();
    const sent = await openLoop(rate, SECONDS, send);
    await drain(name);
    // What the last deliveries left to do (their writes, the relay's marks) before the second snapshot.
    await sleep(500);
    const after = await cpuNow();
    const r = { ...summary(name, rate, sent), cpu: before && after ? cpuPerUnit(before, after, sent, { countStarted: true }) : undefined };
    progress(
      `${name}: delivered ${r.delivered}/${r.accepted}, p50 ${f(r.p50)} ms, p99 ${f(r.p99)} ms, errors ${r.errors} ${JSON.stringify(r.statuses)}`,
    );
    results.push(r);
    if (args.timeline) printTimeline(name);
    await sleep(2000);
    return r;
  };
  const known = await measure(
    'known',
    Number(args['known-rate']),
    inbound('known', (i) => `known-${i % KNOWN_CONTACTS}`),
  );
  const fresh = await measure(
    'new',
    Number(args['new-rate']),
    inbound('new', (i) => `new-${run}-${i}`),
  );
  const contacts = await measure('contacts', Number(args['contacts-rate']), createContact('contacts'));

  // Nothing stored without its contact: every new sender's conversation has its contact once crm has linked it.
  let unlinked = NaN;
  for (let tries = 0; tries < 50; tries++) {
    const { rows } = await messagingDb.query(
      "SELECT count(*) FILTER (WHERE contact_id IS NULL)::int AS unlinked, count(*)::int AS n FROM conversations WHERE org_id = $1 AND contact_chatnet_uid LIKE 'new-%'",
      [owner.user.orgId ?? owner.orgId],
    );
    unlinked = rows[0].unlinked;
    if (rows[0].n > 0 && unlinked === 0) break;
    await sleep(200);
  }

  const ok = (r, p99) => r.lost === 0 && r.errors === 0 && r.p99 < p99;
  const lines = [
    '## npm-start',
    '',
    `Command: \`node bench/npm-start/run.mjs${args.url ? ` --url ${args.url}` : ''} --write\` (the bench runs \`npm start\` itself with SIGNUP_ENABLED=true and WEBHOOK_ALLOWED_PRIVATE_ADDRESSES=127.0.0.1; every other setting is \`npm start\`'s default). ` +
      `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${os.cpus().length} cores; load average before the run ${LOAD_BEFORE.map((l) => l.toFixed(2)).join(' ')}, 1-minute at the end ${os.loadavg()[0].toFixed(1)}.`,
    '',
    'Every service `npm start` runs (identity, crm, messaging, chatnet-connector with the sandbox network, automation, ai, webhooks) and the gateway, measured from outside through the gateway. Latency = signed webhook received (every signature verified) − request sent, one clock. ' +
      `Messages: POST /sandbox/accounts/:id/inbound → message.received; ${KNOWN_CONTACTS} known contacts wrote once in a warm-up. Contacts: POST /api/public/contacts (X-API-Key of ${PUBLIC_ORGS} organizations in turn) → contact.created.`,
    '',
    '| run | offered/s for s | sent | accepted | delivered | lost | errors | p50 ms | p99 ms | HTTP p99 ms | target | met |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    `| known contacts | ${known.offered} × ${SECONDS} | ${known.sent} | ${known.accepted} | ${known.delivered} | ${known.lost} | ${known.errors} | ${f(known.p50)} | ${f(known.p99)} | ${f(known.req99)} | p99 < 250 ms | **${ok(known, 250) ? 'met' : 'NOT met'}** |`,
    `| new senders | ${fresh.offered} × ${SECONDS} | ${fresh.sent} | ${fresh.accepted} | ${fresh.delivered} | ${fresh.lost} | ${fresh.errors} | ${f(fresh.p50)} | ${f(fresh.p99)} | ${f(fresh.req99)} | p99 < 500 ms, every conversation with its contact (without: ${unlinked}) | **${ok(fresh, 500) && unlinked === 0 ? 'met' : 'NOT met'}** |`,
    `| public contact creates | ${contacts.offered} × ${SECONDS} | ${contacts.sent} | ${contacts.accepted} | ${contacts.delivered} | ${contacts.lost} | ${contacts.errors} | ${f(contacts.p50)} | ${f(contacts.p99)} | ${f(contacts.req99)} | p99 < 250 ms | **${ok(contacts, 250) ? 'met' : 'NOT met'}** |`,
    '',
    ...cpuTable(results),
    `Invalid signatures: ${receivers.reduce((a, r) => a + r.stats.badSignatures, 0)}. Answers other than 2xx: ${JSON.stringify(Object.fromEntries(results.map((r) => [r.name, Object.fromEntries(Object.entries(r.statuses).filter(([s]) => !s.startsWith('2')))])))}.`,
    '',
  ];
  console.log(lines.join('\n'));
  if (args.write) writeResultsSection(path.join(root, 'bench', 'RESULTS.md'), 'npm-start', lines.join('\n'), { keepEarlier: true });
} catch (err) {
  progress(`failed: ${err.stack ?? err}`);
  exitCode = 1;
} finally {
  for (const r of receivers) r.close();
  agent.destroy();
  await messagingDb.end();
  await serverDb.end();
  await stopStack();
}
process.exit(exitCode);
