// Analytics endpoints at 100k contacts and 1M messages in one organization, through the gateway, with autocannon.
//
//   npm run bench:analytics -- [--duration 15] [--connections 10] [--conversations 50000] [--contacts 100000] [--write] [--hold]
//
// Needs: built dist of identity, crm and gateway (npm run build), PostgreSQL/RabbitMQ/Redis at their local defaults
// (or DATABASE_URL/AMQP_URL/REDIS_URL). Starts identity, crm and the gateway as separate Node processes on fresh
// databases, signs up an org (and a neighbouring one), creates its users and custom statuses through the API, then
// seeds crm's analytics read model with SQL (seed.mjs: 20 messages per conversation) and checks a sample of the
// seeded conversations against the consumer's own replay (dist/analytics/turns.js). Measures each scenario over
// HTTP, then the response-time statistics once more inside PostgreSQL: exact percentile_disc over every response
// of the period (the approach not taken) against the endpoint's queries (daily histogram + one bucket).
// --write replaces the "## analytics" section of bench/RESULTS.md. Everything it creates is removed at the end.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { benchDbUrl, freePort, processGroup, root, waitReady, identityCrmEnv } from '../lib/processes.mjs';
import { writeResultsSection } from '../lib/results.mjs';
import { seedAnalytics } from './seed.mjs';

const require = createRequire(path.join(root, 'package.json'));
const pg = require('pg');
const autocannon = require('autocannon');

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const DURATION = Number(opt('duration', '15'));
const CONNECTIONS = Number(opt('connections', '10'));
const CONVERSATIONS = Number(opt('conversations', '50000'));
const CONTACTS = Number(opt('contacts', '100000'));
const USERS = 20;
/** Seconds of load before each measured scenario (caches, prepared statements, JIT). */
const WARM_UP = 3;
const WRITE = args.includes('--write');
// Keep the seeded stack up (for EXPLAIN and profiling) until Ctrl-C instead of measuring.
const HOLD = args.includes('--hold');

const PG = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const AMQP = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const run = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
const dbUrl = benchDbUrl(PG, run);
const { children, launch, stopAll } = processGroup();

async function api(url, token, method, p, body) {
  const res = await fetch(`${url}${p}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json().catch(() => undefined);
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function measure(url, token, paths, label, duration = DURATION, connections = CONNECTIONS) {
  const r = await autocannon({
    url,
    connections,
    duration,
    headers: { authorization: `Bearer ${token}` },
    requests: paths.map((p) => ({ method: 'GET', path: p })),
  });
  const result = {
    label,
    connections,
    paths: paths.length,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.non2xx + r.errors,
    load: os.loadavg()[0],
  };
  console.log(`${label}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, errors ${result.errors}`);
  return result;
}

/** The seeded rows follow the consumer's rules: replay a sample of conversations with its code and compare. */
async function checkSeed(db, orgId) {
  const { replay, EMPTY_STATE } = require(path.join(root, 'services', 'crm', 'dist', 'analytics', 'turns.js'));
  const { rows: convs } = await db.query('SELECT conversation_id FROM analytics_conversations WHERE org_id = $1 ORDER BY random() LIMIT 50', [orgId]);
  const key = (d) => `${d.kind}|${d.first}|${d.startedAt}|${d.endedAt}|${d.userId}`;
  for (const { conversation_id: id } of convs) {
    const { rows: items } = await db.query(
      'SELECT item_id, at, kind, user_id FROM analytics_items WHERE org_id = $1 AND conversation_id = $2 ORDER BY at, kind, item_id',
      [orgId, id],
    );
    const expected = replay(
      EMPTY_STATE,
      items.map((i) => ({ id: i.item_id, at: i.at.getTime(), kind: i.kind, userId: i.user_id })),
    )
      .durations.map(key)
      .sort();
    const { rows: stored } = await db.query(
      'SELECT kind, first, started_at, ended_at, user_id FROM analytics_durations WHERE org_id = $1 AND conversation_id = $2',
      [orgId, id],
    );
    const actual = stored
      .map((d) =>
        key({
          kind: d.kind === 1 ? 'response' : 'resolution',
          first: d.first,
          startedAt: d.started_at.getTime(),
          endedAt: d.ended_at.getTime(),
          userId: d.user_id,
        }),
      )
      .sort();
    if (JSON.stringify(actual) !== JSON.stringify(expected)) throw new Error(`seeded conversation ${id} differs from the consumer's replay`);
  }
  return convs.length;
}

/** Milliseconds per run of `fn`, run `times` times one after another: median and max. */
async function timeQueries(times, fn) {
  const ms = [];
  for (let i = 0; i < times; i++) {
    const t = process.hrtime.bigint();
    await fn();
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  ms.sort((a, b) => a - b);
  return { median: ms[Math.floor(ms.length / 2)], max: ms[ms.length - 1] };
}

/** The response-time statistics in PostgreSQL alone, both ways, for the same period. */
async function sqlComparison(db, orgId, from, to, bounds) {
  const exact = () =>
    db.query(
      `SELECT percentile_disc(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY ms) AS p, avg(ms) FILTER (WHERE first), count(*) FILTER (WHERE ms <= 900000)
       FROM analytics_durations WHERE org_id = $1 AND kind = 1 AND ended_at >= $2 AND ended_at < $3`,
      [orgId, from, to],
    );
  const { splitPeriod } = require(path.join(root, 'services', 'crm', 'dist', 'analytics', 'period.js'));
  const split = splitPeriod({ from, to });
  const histogramWay = async () => {
    const { rows } = await db.query(
      `SELECT bucket, sum(n)::bigint AS n FROM analytics_histogram
       WHERE org_id = $1 AND series = 1 AND ((unit = 'm' AND start >= $2 AND start < $3) OR (unit = 'd' AND ((start >= $4 AND start < $5) OR (start >= $6 AND start < $7))))
       GROUP BY bucket ORDER BY bucket`,
      [orgId, ...split.months, ...split.monthEdgeDays],
    );
    const total = rows.reduce((t, r) => t + Number(r.n), 0);
    const targets = [0.5, 0.95, 0.99].map((p) => {
      const k = Math.ceil(p * total);
      let before = 0;
      for (const r of rows) {
        if (before + Number(r.n) >= k) return [r.bucket, k - before - 1];
        before += Number(r.n);
      }
    });
    await db.query(
      `SELECT (SELECT ms FROM analytics_durations d WHERE d.org_id = $1 AND d.kind = 1 AND d.bucket = t.b AND d.ended_at >= $2 AND d.ended_at < $3 ORDER BY ms OFFSET t.k LIMIT 1)
       FROM unnest($4::int[], $5::int[]) AS t(b, k)`,
      [orgId, from, to, targets.map((t) => t[0]), targets.map((t) => t[1])],
    );
    const sla = bounds.filter((b) => b <= 900000).length;
    await db.query(
      `SELECT count(*) FROM analytics_durations WHERE org_id = $1 AND kind = 1 AND bucket = $4 AND ended_at >= $2 AND ended_at < $3 AND ms <= 900000`,
      [orgId, from, to, sla],
    );
  };
  await exact();
  await histogramWay();
  return { exact: await timeQueries(20, exact), histogram: await timeQueries(20, histogramWay) };
}

let interrupted = false;
process.on('SIGINT', () => {
  interrupted = true;
});

async function main() {
  const ports = { identity: await freePort(), crm: await freePort(), gateway: await freePort() };
  const env = await identityCrmEnv(run, ports, { RATE_LIMIT_USER_PER_MINUTE: '100000000', RATE_LIMIT_PUBLIC_PER_MINUTE: '100000000' });
  const crmDb = dbUrl('crm');
  const identityDb = dbUrl('identity');
  try {
    launch('identity', { ...env, DATABASE_URL: identityDb, GRPC_PORT: String(ports.identity) });
    launch('crm', { ...env, DATABASE_URL: crmDb, GRPC_PORT: String(ports.crm) });
    launch('gateway', { ...env, HOST: '127.0.0.1', PORT: String(ports.gateway), SERVICES: 'identity,crm' });
    const url = `http://127.0.0.1:${ports.gateway}`;
    await waitReady(url);

    const signup = (orgName) =>
      api(url, undefined, 'POST', '/api/v1/auth/signup', {
        orgName,
        fullName: 'Bench Owner',
        email: `bench.${run}.${orgName.toLowerCase()}@example.test`,
        password: 'correct horse battery',
      });
    const big = await signup('Big');
    const other = await signup('Neighbour');
    const setUp = async (org) => {
      const users = [];
      for (let i = 0; i < USERS; i++) {
        const u = await api(url, org.token, 'POST', '/api/v1/users', {
          email: `agent${i}.${run}.${org.user.orgId.slice(0, 8)}@example.test`,
          fullName: `Agent ${String(i).padStart(2, '0')}`,
          role: 'agent',
          department: i % 2 ? 'Sales' : 'Support',
          password: 'correct horse battery',
        });
        users.push(u.id);
      }
      const statusIds = [];
      for (const [i, name] of ['Qualified', 'Proposal', 'Negotiation'].entries())
        statusIds.push((await api(url, org.token, 'POST', '/api/v1/contact-statuses', { name, position: i + 1 })).id);
      return { users, statusIds };
    };
    const bigSetup = await setUp(big);
    const otherSetup = await setUp(other);

    const db = new pg.Client({ connectionString: crmDb });
    db.on('error', () => undefined);
    await db.connect();
    const { BOUNDS } = require(path.join(root, 'services', 'crm', 'dist', 'analytics', 'buckets.js'));
    const t0 = Date.now();
    const seeded = await seedAnalytics(db, { orgId: big.user.orgId, ...bigSetup, conversations: CONVERSATIONS, contacts: CONTACTS, bounds: BOUNDS });
    // A neighbouring tenant, so the indexes hold more than one organization.
    const neighbour = await seedAnalytics(db, {
      orgId: other.user.orgId,
      ...otherSetup,
      conversations: Math.round(CONVERSATIONS / 5),
      contacts: Math.round(CONTACTS / 5),
      bounds: BOUNDS,
    });
    await db.query('VACUUM ANALYZE');
    const seedSeconds = (Date.now() - t0) / 1000;
    console.log(`seeded in ${seedSeconds.toFixed(0)} s:`, seeded, 'neighbour:', neighbour);
    const checked = await checkSeed(db, big.user.orgId);

    const today = new Date();
    const day = (d) => d.toISOString().slice(0, 10);
    const daysAgo = (n) => day(new Date(today.getTime() - n * 86_400_000));
    const q = (p, params) => `/api/v1/analytics/${p}?${new URLSearchParams(params)}`;
    const year = { dateFrom: daysAgo(364), dateTo: day(today) };
    const month = { dateFrom: daysAgo(29), dateTo: day(today) };
    // Timestamps: partial days at both ends, read from the raw rows.
    const yearEdges = { dateFrom: `${daysAgo(364)}T09:30:00Z`, dateTo: `${daysAgo(1)}T17:45:00Z` };

    const scenarios = [
      ['baseline: GET /api/v1/profile (identity, one row)', ['/api/v1/profile']],
      ['conversion-funnel, 30 days', [q('conversion-funnel', month)]],
      ['conversion-funnel, 365 days', [q('conversion-funnel', year)]],
      ['conversion-funnel, 365 days, groupBy week / month', ['week', 'month'].map((g) => q('conversion-funnel', { ...year, groupBy: g }))],
      ['conversion-funnel, 365 days, groupBy day (365 slices, 150 KB of JSON)', [q('conversion-funnel', { ...year, groupBy: 'day' })]],
      ['conversion-funnel, 365 days, groupBy day, one client', [q('conversion-funnel', { ...year, groupBy: 'day' })], 1],
      ['response-time, 30 days', [q('response-time', month)]],
      ['response-time, 365 days', [q('response-time', year)]],
      ['response-time, 365 days between timestamps (partial days at both ends)', [q('response-time', yearEdges)]],
      [
        'response-time, 365 days, slaMinutes 5 / 60',
        [q('response-time', { ...year, slaMinutes: '5' }), q('response-time', { ...year, slaMinutes: '60' })],
      ],
      ['team-performance, 30 days (not a target)', [q('team-performance', month)]],
      ['team-performance, 365 days (not a target)', [q('team-performance', year)]],
    ];
    const sample = await api(url, big.token, 'GET', q('response-time', year));
    console.log('response-time, 365 days:', JSON.stringify(sample));
    if (HOLD) {
      console.log(JSON.stringify({ url, token: big.token, orgId: big.user.orgId, crmDb, paths: scenarios.flatMap(([, p]) => p) }));
      await new Promise((resolve) => process.once('SIGINT', resolve));
      return;
    }
    const results = [];
    for (const [label, paths, connections = CONNECTIONS] of scenarios) {
      if (interrupted) throw new Error('interrupted');
      await measure(url, big.token, paths, `warm-up ${label}`, WARM_UP, connections).catch(() => undefined);
      results.push(await measure(url, big.token, paths, label, DURATION, connections));
    }
    const sql = await sqlComparison(
      db,
      big.user.orgId,
      new Date(`${year.dateFrom}T00:00:00Z`),
      new Date(new Date(`${year.dateTo}T00:00:00Z`).getTime() + 86_400_000),
      BOUNDS,
    );
    console.log('SQL, 365 days: exact percentile_disc', sql.exact, 'histogram + bucket', sql.histogram);
    await db.end();
    if (WRITE) writeResults(results, sql, { seeded, neighbour, seedSeconds, checked, sample });
  } catch (err) {
    console.error(err);
    process.exitCode = 1;
  } finally {
    await stopAll();
    const admin = new pg.Client({ connectionString: PG });
    await admin.connect();
    for (const u of [crmDb, identityDb]) await admin.query(`DROP DATABASE IF EXISTS "${new URL(u).pathname.slice(1)}" WITH (FORCE)`);
    await admin.end();
    // Every queue of the exchange by prefix: crm's consumers come and go.
    await require('@crm/testing')
      .deleteRabbitPrefix(AMQP, env.EVENTS_EXCHANGE)
      .catch((err) => console.error(`could not delete RabbitMQ topology ${env.EVENTS_EXCHANGE}: ${err.message}`));
    await require('@crm/testing')
      .clearRedisPrefix(env.REDIS_PREFIX)
      .catch((err) => console.error(`could not clear Redis prefix ${env.REDIS_PREFIX}: ${err.message}`));
  }
}

function writeResults(results, sql, meta) {
  const file = path.join(root, 'bench', 'RESULTS.md');
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const base = results[0];
  const n = (v) => Number(v).toLocaleString('en');
  const rows = results.map(
    (r) =>
      `| ${r.label} | ${r.connections} | ${r.paths} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r === base ? '1.0' : (r.p99 / base.p99).toFixed(1)} | ${r.errors} | ${r.load.toFixed(1)} |`,
  );
  const targets = results.filter((r) => /^(conversion-funnel|response-time)/.test(r.label) && r.connections === CONNECTIONS);
  const missed = targets.filter((r) => r.p99 >= 200);
  const day = results.find((r) => r.label.startsWith('conversion-funnel, 365 days, groupBy day (') && r.p99 >= 200);
  const dayAlone = results.find((r) => r.label === 'conversion-funnel, 365 days, groupBy day, one client');
  const section = [
    '## analytics',
    '',
    `Funnel, response-time and team-performance queries through the gateway (JWT → gateway → gRPC → crm → PostgreSQL), one`,
    `organization with ${n(meta.seeded.contacts)} contacts and ${n(meta.seeded.messages)} messages over 365 days (${n(meta.seeded.responses)} responses, ${n(meta.seeded.resolutions)} resolutions), plus a`,
    `neighbouring one with ${n(meta.neighbour.contacts)} contacts and ${n(meta.neighbour.messages)} messages. The read model was seeded with set-based SQL straight into its`,
    `tables (bench/analytics/seed.mjs, ${meta.seedSeconds.toFixed(0)} s), not through 1.2M events; ${meta.checked} seeded conversations were replayed with the consumer's code`,
    'and matched. Tool: autocannon (in the runner process), ' +
      `${CONNECTIONS} connections unless the row says otherwise, ${DURATION} s per scenario after a ${WARM_UP} s warm-up, on the`,
    'same 2-core machine as PostgreSQL, Redis, the three Node processes and other work (last column). Each scenario cycles',
    'through its paths. "p99 ÷ baseline" compares with GET /api/v1/profile measured in the same run (same hops, one row).',
    `Measured ${when} UTC.`,
    '',
    '```',
    `npm run bench:analytics -- --duration ${DURATION} --connections ${CONNECTIONS} --conversations ${CONVERSATIONS} --contacts ${CONTACTS} --write`,
    '```',
    '',
    '| scenario | connections | paths | req/s | p50 ms | p99 ms | p99 ÷ baseline | errors | machine load (1 min) after |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `Target p99 < 200 ms for the funnel and response-time queries at ${CONNECTIONS} connections: ${
      missed.length === 0
        ? '**met** by every scenario.'
        : `**met** by ${targets.length - missed.length} of ${targets.length} scenarios, **NOT met** by ${missed.map((r) => `${r.label} (p99 ${r.p99.toFixed(1)} ms)`).join(', ')}.`
    }`,
    ...(day && dayAlone
      ? [
          `A funnel by day over a whole year is the heaviest answer: 365 slices, about 150 KB of JSON built by crm, sent over gRPC and`,
          `re-encoded by the gateway; its cost is the size of the answer, not the query. One client gets it with p99 ${dayAlone.p99.toFixed(1)} ms; ten at`,
          `once queue behind each other on two cores (p99 ${day.p99.toFixed(1)} ms). By week or month the same year stays well inside the target.`,
        ]
      : []),
    '',
    `Why a histogram: the same response-time statistics for 365 days (${n(meta.sample.responses)} responses) computed inside PostgreSQL, one query at a time, 20 runs:`,
    `exact \`percentile_disc\` over every response of the period, median ${sql.exact.median.toFixed(1)} ms (max ${sql.exact.max.toFixed(1)}); the endpoint's way (monthly and`,
    `daily histogram, then one bucket's rows per percentile and for the SLA), median ${sql.histogram.median.toFixed(1)} ms (max ${sql.histogram.max.toFixed(1)}): ${(sql.exact.median / sql.histogram.median).toFixed(1)}× less, with the`,
    'same exact answers. The first grows with the responses in the period; the second with its months and days and the size of one bucket.',
    '',
  ].join('\n');
  writeResultsSection(file, 'analytics', section);
}

main().catch(async (err) => {
  console.error(err);
  await stopAll().catch(() => undefined);
  process.exit(1);
});
