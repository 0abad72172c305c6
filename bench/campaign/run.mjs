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
// The baseline, in the same run after each campaign round: another set of leads of the same mix reached by hand, one
// POST /api/v1/conversations per lead (8 at a time), measured the same way; RESULTS.md gives campaign ÷ by hand.
//
// Usage: node bench/campaign/run.mjs [--leads 500] [--rounds 3 (at most 4)] [--warmup 100] [--statements 12] [--write]
// pg_stat_statements must be loaded for the statements table (it is read, never reset: other runs are left alone).
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { cpuSnapshot } from '../lib/cpu.mjs';
import { freePort, processGroup, root, signupOrg, waitReady, wholeStackEnv } from '../lib/processes.mjs';
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
// Every service `npm start` starts (scripts/start.mjs).
const services = ['identity', 'crm', 'chatnet-connector', 'messaging', 'webhooks', 'automation', 'ai'];
const dbName = Object.fromEntries(services.map((s) => [s, `bench_${run}_${s.replace(/-/g, '_')}`]));
const dbUrl = (s) => Object.assign(new URL(pgUrl), { pathname: `/${dbName[s]}` }).toString();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const progress = (m) => process.stderr.write(`[bench:campaign] ${m}\n`);
const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
const sum = (cpu) => Object.values(cpu).reduce((a, b) => a + b, 0);
/** Rounds of each kind; hand rounds use round numbers 5-8 for their leads' phones and tags. */
const ROUNDS = Number(args.rounds);
if (!(ROUNDS >= 1 && ROUNDS <= 4)) throw new Error('--rounds is 1 to 4');
/** Conversations started at once by the hand baseline (as an integrator's worker pool would). */
const HAND_CONCURRENCY = 8;

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
try {
  for (const db of Object.values(dbName)) await admin.query(`CREATE DATABASE "${db}"`);
  const ports = Object.fromEntries(await Promise.all([...services, 'gateway'].map(async (s) => [s, await freePort()])));
  const common = wholeStackEnv({ amqpUrl, exchange, redisPrefix, ports, extra: { REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' } });
  // As tests/automation/campaign-outreach.test.ts sets them.
  const own = {
    // The bench's own account sends far past the per-account defaults, by campaign and (the baseline) by hand.
    messaging: {
      ATTACHMENTS_DIR: path.join(os.tmpdir(), `bench-${run}`),
      SEND_LIMITS: 'total=100000/day,1000/1s;campaign=100000/day,1000/1s;ui=100000/day,1000/1s',
    },
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

  /** One round's leads imported on the network and in crm, tagged r<round>; their contact ids. */
  const importLeads = async (round, n) => {
    const leads = leadsOf(round, n);
    for (let i = 0; i < leads.phones.length; i += 500) await must('POST', '/sandbox/network/phones', { phones: leads.phones.slice(i, i + 500) });
    const fd = new FormData();
    fd.append('file', new Blob([leads.csv], { type: 'text/csv' }), 'leads.csv');
    const imported = await fetch(`${url}/api/v1/contacts/import`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: fd });
    if (imported.status !== 200) throw new Error(`import ${imported.status}`);
    return leads;
  };

  /**
   * CPU by process, statements and counters per lead of `work()` (n leads): the stack idle first, its idle rate over 2 s
   * taken out of every process's figure, and followed until it is idle again (the work's events consumed).
   */
  const measure = async (n, work) => {
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
    const outcome = await work();
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
    return {
      n,
      wallMs,
      cpu,
      outcome,
      statements: statementsPerUnit(stmts0, stmts1, n, Number(args.statements)),
      counters: countersPerUnit(counters0, counters1, n),
    };
  };

  /** A campaign to a round's leads, activation → completed. */
  const campaignRound = async (round, n) => {
    const leads = await importLeads(round, n);
    const criteria = { filters: [{ field: 'tags', operator: 'contains', value: `r${round}` }] };
    const list = (await must('POST', '/api/v1/customer-lists', { name: `Round ${round}`, criteria })).id;
    const campaign = (
      await must('POST', '/api/v1/campaigns', { name: `Round ${round}`, listId: list, templateId: template, chatnetAccountId: account })
    ).id;
    const res = await measure(n, async () => {
      await must('POST', `/api/v1/campaigns/${campaign}/activate`);
      for (;;) {
        await sleep(100);
        const c = await must('GET', `/api/v1/campaigns/${campaign}`);
        if (c.status === 'completed') return c.counts;
      }
    });
    const counts = res.outcome;
    const ok = counts.sent === leads.expected.sent && counts.skipped === leads.expected.skipped && counts.failed === 0;
    if (!ok) progress(`round ${round}: counts ${JSON.stringify(counts)}, expected ${JSON.stringify(leads.expected)}`);
    return { ...res, kind: 'campaign', round, ok };
  };

  /**
   * The baseline: the same mix of leads reached by hand, as an integrator without campaigns would: one
   * `POST /api/v1/conversations` per lead (its contact id and the template's text), HAND_CONCURRENCY at a time.
   * The leads on the network answer 201; the others are refused (not on the network, strangers refused, no phone).
   */
  const handRound = async (round, n) => {
    const leads = await importLeads(round, n);
    const contacts = [];
    for (let page = 1; contacts.length < n; page++) {
      const got = await must('GET', `/api/v1/contacts?tag=r${round}&limit=100&page=${page}`);
      if (got.data.length === 0) throw new Error(`round ${round}: ${contacts.length} of ${n} contacts listed`);
      contacts.push(...got.data);
    }
    const res = await measure(n, async () => {
      const statuses = {};
      let next = 0;
      const lane = async () => {
        while (next < contacts.length) {
          const c = contacts[next++];
          const r = await api('POST', '/api/v1/conversations', {
            chatnetAccountId: account,
            contactId: c.id,
            content: `Chào ${c.name}, ưu đãi mới!`,
          });
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        }
      };
      await Promise.all(Array.from({ length: HAND_CONCURRENCY }, lane));
      return statuses;
    });
    const ok = res.outcome[201] === leads.expected.sent && !Object.keys(res.outcome).some((st) => Number(st) >= 500);
    if (!ok) progress(`hand round ${round}: answers ${JSON.stringify(res.outcome)}, expected ${leads.expected.sent} × 201 and no 5xx`);
    return { ...res, kind: 'by hand', round, ok };
  };

  progress(`warm-up: ${args.warmup} leads`);
  await campaignRound(0, Number(args.warmup));
  const pairs = [];
  for (let r = 1; r <= ROUNDS; r++) {
    const said = (res) => `${f(res.wallMs / 1000, 1)} s, ${f(sum(res.cpu), 1)} ms CPU per lead`;
    progress(`round ${r}: a campaign to ${args.leads} leads`);
    const campaign = await campaignRound(r, Number(args.leads));
    progress(`round ${r}: campaign ${said(campaign)}; the same by hand`);
    // Hand rounds' leads are another set (round 4 + r: their own phones and tag).
    const hand = await handRound(4 + r, Number(args.leads));
    progress(`round ${r}: by hand ${said(hand)}`);
    pairs.push({ r, campaign, hand });
  }
  const rounds = pairs.flatMap((p) => [p.campaign, p.hand]);

  const labels = [...services, 'gateway', ...services.map((s) => `pg ${s}`), 'rabbitmq', 'redis'].filter((l) => rounds.some((r) => l in r.cpu));
  const total = (r) => labels.reduce((a, l) => a + (r.cpu[l] ?? 0), 0);
  const outcome = (r) =>
    r.kind === 'campaign'
      ? `sent ${r.outcome.sent}, skipped ${r.outcome.skipped}`
      : Object.entries(r.outcome)
          .map(([st, c]) => `${c}× ${st}`)
          .join(', ');
  const statementsOf = (r) =>
    r.statements.summary.length === 0
      ? ['(pg_stat_statements is not loaded: no statement counts)']
      : [
          ...r.statements.summary.map((x) => `- ${x}`),
          '',
          '| database | calls | ms | statement |',
          '|---|---|---|---|',
          ...r.statements.top.map((x) => `| ${x.db} | ${f(x.calls)} | ${f(x.ms, 3)} | \`${x.query.slice(0, 100).replace(/\|/g, '\\|')}\` |`),
        ];
  const last = pairs[pairs.length - 1];
  const section = [
    '## campaign',
    '',
    `Command: \`node bench/campaign/run.mjs --leads ${args.leads} --rounds ${args.rounds} --warmup ${args.warmup}\`. ${os.cpus().length} cores; ` +
      `1-minute load average at the end ${os.loadavg()[0].toFixed(1)}. Every service \`npm start\` starts, each in its own process. ` +
      `Each round: ${args.leads} imported leads (60% on the network, 12% friends only, 18% not on it, 10% no phone) reached once by a campaign ` +
      `(CAMPAIGN_SEND_PER_MINUTE 12000) and, as the baseline, another ${args.leads} of the same mix by hand: \`POST /api/v1/conversations\` per lead, ` +
      `${HAND_CONCURRENCY} at a time. CPU ms per lead by process, each process's idle rate left out (pg X: the PostgreSQL backends of X; rabbitmq and ` +
      'redis serve every run on the machine):',
    '',
    `| round | how | wall s | ${labels.join(' | ')} | total | outcome |`,
    `|---|---|---|${labels.map(() => '---|').join('')}---|---|`,
    ...rounds.map(
      (r) =>
        `| ${r.round} | ${r.kind} | ${f(r.wallMs / 1000, 1)} | ${labels.map((l) => f(r.cpu[l])).join(' | ')} | ${f(total(r))} | ${outcome(r)}${r.ok ? '' : ' WRONG'} |`,
    ),
    '',
    `CPU per lead, campaign ÷ by hand: ${pairs.map((p) => `round ${p.r} ${f(total(p.campaign) / total(p.hand))}×`).join(', ')}.`,
    '',
    `Per lead in round ${last.r}, the campaign then by hand: gRPC calls served, events published and deliveries consumed (the services' /metrics), ` +
      `statements and transactions by database and the ${args.statements} most frequent statements (pg_stat_statements, BEGIN and COMMIT counted):`,
    '',
    '### campaign',
    '',
    ...last.campaign.counters.map((c) => `- ${c}`),
    ...statementsOf(last.campaign),
    '',
    '### by hand',
    '',
    ...last.hand.counters.map((c) => `- ${c}`),
    ...statementsOf(last.hand),
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
