// bench/campaign: what one recipient of a chat-network campaign costs, process by process (issue #26's outreach: leads
// imported from CSV who never wrote, reached through the sandbox network). The scenario of
// tests/automation/campaign-outreach.test.ts, with every service in a process of its own (from dist) so each one's CPU
// is its own: LEADS leads, 60% on the network, 12% on it but taking messages only from friends, 18% not on it, 10%
// without a phone; the same settings as the test (CAMPAIGN_SEND_PER_MINUTE 12000, lookups unpaced).
//
// A warm-up campaign (WARMUP leads, not reported) first; then each measured round imports fresh leads, waits until
// the stack is idle (the import's events consumed), activates a campaign and, once it has completed and the stack is
// idle again (the sends' events consumed), reports per recipient: CPU ms by process (utime + stime from /proc; pg X =
// the PostgreSQL backends of X's database), the idle CPU of that stretch left out; statements and transactions by
// database; gRPC calls served and events published and consumed. Wall time is activation → completed.
//
// Usage: node bench/campaign/run.mjs [--leads 500] [--rounds 3] [--warmup 100] [--statements 12] [--write]
// pg_stat_statements must be loaded for the statements table (it is read, never reset: other runs are left alone).
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { cpuSnapshot } from '../lib/cpu.mjs';
import { freePort, processGroup, root, signupOrg, waitReady } from '../lib/processes.mjs';
import { writeResultsSection } from '../lib/results.mjs';
import { counterSnapshot, countersPerUnit, statementSnapshot, statementsPerUnit } from './counters.mjs';

const { values: args } = parseArgs({
  options: {
    leads: { type: 'string', default: '500' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '100' },
    statements: { type: 'string', default: '12' },
    write: { type: 'boolean', default: false },
  },
});
const require = createRequire(path.join(root, 'packages', 'events', 'package.json'));
const pg = require('pg');
const pgUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const amqpUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const run = `cmp${Date.now().toString(36)}`;
const exchange = `bench_${run}`;
const redisPrefix = `bench_${run}:`;
const services = ['identity', 'crm', 'chatnet-connector', 'messaging', 'automation'];
const dbName = Object.fromEntries(services.map((s) => [s, `bench_${run}_${s.replace(/-/g, '_')}`]));
const dbUrl = (s) => Object.assign(new URL(pgUrl), { pathname: `/${dbName[s]}` }).toString();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const progress = (m) => process.stderr.write(`[bench:campaign] ${m}\n`);
const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

/** The leads of one round: who is on the network (and takes strangers' messages), who is not, who has no phone. */
function leadsOf(round, n) {
  const on = Math.round(n * 0.6);
  const shy = Math.round(n * 0.12);
  const off = Math.round(n * 0.18);
  const nophone = n - on - shy - off;
  const num = (kind, i) => `9${round}${kind}${String(i).padStart(6, '0')}`.slice(0, 10);
  const phones = [
    ...Array.from({ length: on }, (_, i) => ({ phone: `0${num(1, i)}`, chatnetUid: `r${round}-on-${i}`, displayName: `On ${i}` })),
    ...Array.from({ length: shy }, (_, i) => ({
      phone: `0${num(2, i)}`,
      chatnetUid: `r${round}-shy-${i}`,
      displayName: `Shy ${i}`,
      acceptsStrangers: false,
    })),
  ];
  const rows = [
    ...Array.from({ length: on }, (_, i) => `Lead on ${i},0${num(1, i)},r${round}`),
    ...Array.from({ length: shy }, (_, i) => `Lead shy ${i},0${num(2, i)},r${round}`),
    ...Array.from({ length: off }, (_, i) => `Lead off ${i},0${num(3, i)},r${round}`),
    ...Array.from({ length: nophone }, (_, i) => `Lead nophone ${i},,r${round}`),
  ];
  return { phones, csv: `name,phone,tags\n${rows.join('\n')}\n`, expected: { sent: on, skipped: shy + off + nophone } };
}

const group = processGroup();
/** Removes the run's processes, databases, exchange and Redis keys (once, at the end or when interrupted). */
let cleaning;
const cleanUp = () =>
  (cleaning ??= (async () => {
    await group.stopAll().catch(() => undefined);
    for (const db of Object.values(dbName)) await admin.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    const { deleteRabbitPrefix, clearRedisPrefix } = require('@crm/testing');
    await deleteRabbitPrefix(amqpUrl, exchange).catch(() => undefined);
    await clearRedisPrefix(redisPrefix).catch(() => undefined);
  })());
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
const admin = new pg.Pool({ connectionString: pgUrl, max: 2 });
admin.on('error', () => undefined);
const pids = {};
const rounds = [];
try {
  for (const db of Object.values(dbName)) await admin.query(`CREATE DATABASE "${db}"`);
  const ports = Object.fromEntries(await Promise.all([...services, 'gateway'].map(async (s) => [s, await freePort()])));
  const addr = (s) => (ports[s] ? `127.0.0.1:${ports[s]}` : '127.0.0.1:9');
  const common = {
    NODE_ENV: 'development',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    AMQP_URL: amqpUrl,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    EVENTS_EXCHANGE: exchange,
    REDIS_PREFIX: redisPrefix,
    JWT_SECRET: randomBytes(32).toString('hex'),
    INTERNAL_AUTH_SEED: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    IDENTITY_ADDR: addr('identity'),
    CRM_ADDR: addr('crm'),
    CONNECTOR_ADDR: addr('chatnet-connector'),
    MESSAGING_ADDR: addr('messaging'),
    AUTOMATION_ADDR: addr('automation'),
    WEBHOOKS_ADDR: addr('webhooks'),
    AI_ADDR: addr('ai'),
    SIGNUP_ENABLED: 'true',
  };
  // As tests/automation/campaign-outreach.test.ts sets them.
  const own = {
    messaging: { ATTACHMENTS_DIR: path.join(os.tmpdir(), `bench-${run}`), SEND_LIMITS: 'total=100000/day,1000/1s;campaign=100000/day,1000/1s' },
    'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500', LOOKUP_PER_ACCOUNT_PER_MINUTE: '100000' },
    automation: { CAMPAIGN_POLL_MS: '100', CAMPAIGN_SEND_PER_MINUTE: '12000' },
  };
  for (const s of services) {
    pids[s] = group.launch(s, { ...common, DATABASE_URL: dbUrl(s), GRPC_PORT: String(ports[s]), ...own[s] }).pid;
  }
  const gatewayEnv = { HOST: '127.0.0.1', PORT: String(ports.gateway), SERVICES: services.join(','), RATE_LIMIT_USER_PER_MINUTE: '100000000' };
  pids.gateway = group.launch('gateway', { ...common, ...gatewayEnv }).pid;
  const url = `http://127.0.0.1:${ports.gateway}`;
  await waitReady(url);

  const { token } = await signupOrg(url, run, 'Campaign');
  const api = async (method, p, body) => {
    const r = await fetch(`${url}${p}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: body && JSON.stringify(body),
    });
    return { status: r.status, body: await r.json().catch(() => undefined) };
  };
  const must = async (method, p, body, status = [200, 201]) => {
    const r = await api(method, p, body);
    if (!status.includes(r.status)) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const account = (await must('POST', '/api/v1/chatnet-accounts', { displayName: 'Campaign line' })).id;
  await must('POST', `/api/v1/chatnet-accounts/${account}/login`);
  if ((await must('POST', `/sandbox/accounts/${account}/scan`, { chatnetUid: `acct-${run}` })).status !== 'connected') throw new Error('scan');
  const template = (await must('POST', '/api/v1/automation/templates', { name: 'Hello', content: 'Chào {{name}}, ưu đãi mới!' })).id;

  /**
   * The stack is idle when its processes used under 30% of a core for two half-seconds in a row (at most 60 s): its
   * own timers (polls, heartbeats) take about 10%, a campaign or its events' consumers far more.
   */
  const idle = async () => {
    let prev = await cpuSnapshot({ processes: pids, dbs: dbName, pool: admin, shared: false });
    for (let calm = 0, t = Date.now(); calm < 2 && Date.now() - t < 60_000;) {
      await sleep(500);
      const next = await cpuSnapshot({ processes: pids, dbs: dbName, pool: admin, shared: false });
      let used = 0;
      for (const [pid, [label, cpu]] of next) if (prev.has(pid) && label !== 'load generator') used += cpu - prev.get(pid)[1];
      calm = used < 0.15 ? calm + 1 : 0;
      prev = next;
    }
  };

  const oneRound = async (round, n) => {
    const leads = leadsOf(round, n);
    for (let i = 0; i < leads.phones.length; i += 500) await must('POST', '/sandbox/network/phones', { phones: leads.phones.slice(i, i + 500) });
    const fd = new FormData();
    fd.append('file', new Blob([leads.csv], { type: 'text/csv' }), 'leads.csv');
    const imported = await fetch(`${url}/api/v1/contacts/import`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: fd });
    if (imported.status !== 200) throw new Error(`import ${imported.status}`);
    const criteria = { filters: [{ field: 'tags', operator: 'contains', value: `r${round}` }] };
    const list = (await must('POST', '/api/v1/customer-lists', { name: `Round ${round}`, criteria })).id;
    const campaign = (
      await must('POST', '/api/v1/campaigns', { name: `Round ${round}`, listId: list, templateId: template, chatnetAccountId: account })
    ).id;
    await idle();
    // The idle stretch before, to take the stack's own timers (polls, heartbeats) out of the figures.
    const idle0 = await cpuSnapshot({ processes: pids, dbs: dbName, pool: admin });
    await sleep(2000);
    const cpu0 = await cpuSnapshot({ processes: pids, dbs: dbName, pool: admin });
    const idleMs = 2000;
    const [stmts0, counters0] = await Promise.all([statementSnapshot(admin, dbName), counterSnapshot(pids)]);
    // PostgreSQL backends come and go with the pools: each is followed from its first sighting to its last.
    const seen = new Map([...cpu0].map(([pid, [label, v]]) => [pid, { label, first: v, last: v }]));
    const follow = async () => {
      for (const [pid, [label, v]] of await cpuSnapshot({ processes: pids, dbs: dbName, pool: admin })) {
        if (!Number.isFinite(v)) continue;
        const known = seen.get(pid);
        if (known) known.last = v;
        else seen.set(pid, { label, first: label.startsWith('pg ') ? 0 : v, last: v });
      }
    };
    const sampler = setInterval(() => void follow().catch(() => undefined), 250);
    const t0 = performance.now();
    await must('POST', `/api/v1/campaigns/${campaign}/activate`);
    let done;
    while (!done) {
      await sleep(100);
      const c = await must('GET', `/api/v1/campaigns/${campaign}`);
      if (c.status === 'completed') done = c;
    }
    const wallMs = performance.now() - t0;
    await idle();
    clearInterval(sampler);
    await follow();
    const spanMs = performance.now() - t0;
    await sleep(1500); // PostgreSQL's statistics are flushed about once a second
    const [stmts1, counters1] = await Promise.all([statementSnapshot(admin, dbName), counterSnapshot(pids)]);
    const cpu = {};
    for (const [pid, { label, first, last }] of seen) {
      if (label === 'load generator') continue;
      const idleRate = cpu0.has(pid) && idle0.has(pid) ? (cpu0.get(pid)[1] - idle0.get(pid)[1]) / idleMs : 0;
      cpu[label] = (cpu[label] ?? 0) + ((last - first - idleRate * spanMs) * 1000) / n;
    }
    const ok = done.counts.sent === leads.expected.sent && done.counts.skipped === leads.expected.skipped && done.counts.failed === 0;
    if (!ok) progress(`round ${round}: counts ${JSON.stringify(done.counts)}, expected ${JSON.stringify(leads.expected)}`);
    return {
      round,
      n,
      ok,
      wallMs,
      cpu,
      statements: statementsPerUnit(stmts0, stmts1, n, Number(args.statements)),
      counters: countersPerUnit(counters0, counters1, n),
    };
  };

  progress(`warm-up: ${args.warmup} leads`);
  await oneRound(0, Number(args.warmup));
  for (let r = 1; r <= Number(args.rounds); r++) {
    progress(`round ${r}: ${args.leads} leads`);
    const res = await oneRound(r, Number(args.leads));
    progress(
      `round ${r}: ${f(res.wallMs / 1000, 1)} s, ${f(
        Object.values(res.cpu).reduce((a, b) => a + b, 0),
        1,
      )} ms CPU per recipient`,
    );
    rounds.push(res);
  }

  const labels = [...services, 'gateway', ...services.map((s) => `pg ${s}`), 'rabbitmq', 'redis'].filter((l) => l in rounds[0].cpu);
  const total = (r) => labels.reduce((a, l) => a + (r.cpu[l] ?? 0), 0);
  const last = rounds[rounds.length - 1];
  const section = [
    '## campaign',
    '',
    `Command: \`node bench/campaign/run.mjs --leads ${args.leads} --rounds ${args.rounds} --warmup ${args.warmup}\`. ${os.cpus().length} cores; ` +
      `1-minute load average at the end ${os.loadavg()[0].toFixed(1)}. Each round: ${args.leads} imported leads (60% on the network, 12% friends only, 18% not on it, 10% no phone), ` +
      'one campaign at CAMPAIGN_SEND_PER_MINUTE 12000, every service in its own process. CPU ms per recipient by process, the idle rate of each process left out ' +
      '(pg X: the PostgreSQL backends of X; rabbitmq and redis serve every run on the machine):',
    '',
    `| round | wall s | ${labels.join(' | ')} | total | counts |`,
    `|---|---|${labels.map(() => '---|').join('')}---|---|`,
    ...rounds.map(
      (r) =>
        `| ${r.round} | ${f(r.wallMs / 1000, 1)} | ${labels.map((l) => f(r.cpu[l])).join(' | ')} | ${f(total(r))} | ${r.ok ? 'as expected' : 'WRONG'} |`,
    ),
    '',
    `Per recipient in round ${last.round}: statements and transactions by database (pg_stat_statements, BEGIN and COMMIT counted as statements), then gRPC calls served, events published and deliveries consumed (the services' /metrics):`,
    '',
    ...last.statements.summary.map((s) => `- ${s}`),
    ...last.counters.map((c) => `- ${c}`),
    '',
    `The ${args.statements} most frequent statements per recipient (round ${last.round}):`,
    '',
    '| database | calls | ms | statement |',
    '|---|---|---|---|',
    ...last.statements.top.map((s) => `| ${s.db} | ${f(s.calls)} | ${f(s.ms, 3)} | \`${s.query.slice(0, 100).replace(/\|/g, '\\|')}\` |`),
    '',
  ].join('\n');
  console.log(section);
  if (args.write) writeResultsSection(path.join(root, 'bench', 'RESULTS.md'), 'campaign', section, { keepEarlier: true });
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await cleanUp();
  process.exit(process.exitCode ?? 0);
}
