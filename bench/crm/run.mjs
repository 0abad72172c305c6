// Contacts list/search at 100k contacts in one organization, through the gateway, measured with wrk.
//
//   node bench/crm/run.mjs [--duration 20] [--connections 20] [--contacts 100000] [--write]
//
// Needs: built dist of identity, crm and gateway (npx tsc -p services/<name>), PostgreSQL/RabbitMQ/Redis at
// their local defaults (or DATABASE_URL/AMQP_URL/REDIS_URL), and wrk (Debian: apt-get install wrk).
// Starts identity, crm and the gateway as separate Node processes on fresh databases, signs up an org, seeds
// contacts with SQL (the API path is not what is measured), then runs one wrk scenario after another.
// --write replaces the "## crm" section of bench/RESULTS.md with the numbers.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchDbUrl, freePort, processGroup, root, waitReady, signupOrg, identityCrmEnv } from '../lib/processes.mjs';
import { writeResultsSection } from '../lib/results.mjs';
import { createRequire } from 'node:module';

const require = createRequire(path.join(root, 'package.json'));
const pg = require('pg');

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const DURATION = Number(opt('duration', '20'));
const CONNECTIONS = Number(opt('connections', '20'));
const CONTACTS = Number(opt('contacts', '100000'));
const WRITE = args.includes('--write');
// Keep the seeded stack up (for EXPLAIN and profiling) until Ctrl-C instead of running wrk.
const HOLD = args.includes('--hold');

const PG = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const AMQP = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const run = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
const dbUrl = benchDbUrl(PG, run);

const { children, launch, stopAll } = processGroup();

// Names as a Vietnamese CRM sees them (with accents; search folds them), plus some English ones.
const FAMILY = [
  'Nguyễn',
  'Trần',
  'Lê',
  'Phạm',
  'Hoàng',
  'Huỳnh',
  'Phan',
  'Vũ',
  'Võ',
  'Đặng',
  'Bùi',
  'Đỗ',
  'Hồ',
  'Ngô',
  'Dương',
  'Lý',
  'Smith',
  'Johnson',
  'Brown',
  'Garcia',
];
const MIDDLE = ['Văn', 'Thị', 'Hữu', 'Minh', 'Thanh', 'Quốc', 'Ngọc', 'Đức'];
const GIVEN = [
  'An',
  'Bình',
  'Cường',
  'Dũng',
  'Hà',
  'Hải',
  'Hạnh',
  'Hiếu',
  'Hoa',
  'Hùng',
  'Hương',
  'Khánh',
  'Lan',
  'Linh',
  'Long',
  'Mai',
  'Nam',
  'Nga',
  'Phong',
  'Phúc',
  'Quân',
  'Quang',
  'Sơn',
  'Tâm',
  'Thảo',
  'Thắng',
  'Trang',
  'Trung',
  'Tuấn',
  'Uyên',
  'Việt',
  'Vy',
  'Yến',
  'Emma',
  'Oliver',
  'Sophia',
  'Liam',
];

/** One INSERT ... SELECT per org: deterministic spread of names, sources, statuses, scores and activity. */
async function seed(client, orgId, count, phoneBase) {
  await client.query(
    `INSERT INTO contacts (id, org_id, name, email, phone, source, status, lead_score, tags, chatnet_uid, thread_types, last_activity, created_at, updated_at)
     SELECT gen_random_uuid(), $1::uuid,
            f || ' ' || m || ' ' || g,
            lower(crm_fold(g)) || '.' || n || '@mail.example',
            '+849' || lpad(($5 + n)::text, 8, '0'),
            (ARRAY['manual','chatnet','socialnet','api'])[1 + (n * 7) % 4],
            (ARRAY['new','lead','customer','lost'])[1 + (n * 13) % 4],
            (n * 37) % 101,
            CASE WHEN n % 5 = 0 THEN ARRAY['vip'] WHEN n % 7 = 0 THEN ARRAY['wholesale'] ELSE '{}' END,
            CASE WHEN n % 3 = 0 THEN 'uid-' || $1::text || '-' || n END,
            CASE WHEN n % 3 = 0 THEN ARRAY['user'] ELSE '{}' END,
            now() - ((n * 7919) % (180 * 24 * 60)) * interval '1 minute',
            now() - ((n::bigint * 104729) % (365 * 24 * 60)) * interval '1 minute',
            now()
     FROM generate_series(1, $2::int) AS n,
          LATERAL (SELECT ($3::text[])[1 + (n * 31) % array_length($3::text[], 1)] AS f,
                          ($4::text[])[1 + (n * 17) % array_length($4::text[], 1)] AS m,
                          ($6::text[])[1 + (n * 29) % array_length($6::text[], 1)] AS g) AS parts`,
    [orgId, count, FAMILY, MIDDLE, phoneBase, GIVEN],
  );
}

// Ctrl-C stops after the scenario running now, and the finally block still cleans up.
let interrupted = false;
process.on('SIGINT', () => {
  interrupted = true;
});

function wrk(url, headers, paths, label) {
  if (interrupted) throw new Error('interrupted');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crm-bench-'));
  const script = path.join(dir, 'paths.lua');
  // Each connection walks the path list from its own offset, so every request in the mix is exercised.
  writeFileSync(
    script,
    `local paths = {${paths.map((p) => JSON.stringify(p)).join(', ')}}
local i = math.random(1, #paths)
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
`,
  );
  const argv = ['-t2', `-c${CONNECTIONS}`, `-d${DURATION}s`, '--latency', '-s', script, ...headers.flatMap((h) => ['-H', h]), url];
  const out = execFileSync('wrk', argv, { encoding: 'utf8' });
  const num = (re) => {
    const m = re.exec(out);
    if (!m) return NaN;
    const v = Number(m[1]);
    const unit = m[2];
    return unit === 'us' ? v / 1000 : unit === 's' ? v * 1000 : v;
  };
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  const result = {
    label,
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]),
    p50: num(/50%\s+([\d.]+)(us|ms|s)/),
    p99: num(/99%\s+([\d.]+)(us|ms|s)/),
    errors: non2xx ? Number(non2xx[1]) : 0,
    paths: paths.length,
  };
  result.load = os.loadavg()[0];
  console.log(`${label}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms, non-2xx ${result.errors}`);
  return result;
}

let restart;

async function main() {
  // wrk --version exits 1 after printing; only its absence matters here.
  if (spawnSync('wrk', ['--version']).error) throw new Error('wrk not found: apt-get install wrk');
  const ports = { identity: await freePort(), crm: await freePort(), gateway: await freePort() };
  const env = await identityCrmEnv(run, ports, { RATE_LIMIT_USER_PER_MINUTE: '100000000', RATE_LIMIT_PUBLIC_PER_MINUTE: '100000000' });
  const crmDb = dbUrl('crm');
  const identityDb = dbUrl('identity');
  try {
    launch('identity', { ...env, DATABASE_URL: identityDb, GRPC_PORT: String(ports.identity) });
    const crmEnv = { ...env, DATABASE_URL: crmDb, GRPC_PORT: String(ports.crm) };
    let crm = launch('crm', crmEnv);
    restart = async (_name, extra) => {
      crm.kill('SIGTERM');
      await new Promise((r) => (crm.exitCode !== null ? r() : crm.once('exit', r)));
      children.splice(children.indexOf(crm), 1);
      crm = launch('crm', { ...crmEnv, ...extra });
    };
    launch('gateway', { ...env, HOST: '127.0.0.1', PORT: String(ports.gateway), SERVICES: 'identity,crm' });
    const url = `http://127.0.0.1:${ports.gateway}`;
    await waitReady(url);

    const signup = (orgName) => signupOrg(url, run, orgName);
    const big = await signup('Big');
    const other = await signup('Neighbour');

    const db = new pg.Client({ connectionString: crmDb });
    db.on('error', () => undefined);
    await db.connect();
    const t0 = Date.now();
    await seed(db, big.user.orgId, CONTACTS, 0);
    // A neighbouring tenant, so the indexes hold more than one organization.
    await seed(db, other.user.orgId, Math.round(CONTACTS / 5), CONTACTS + 1);
    // Steady state as autovacuum leaves it (visibility map set, statistics fresh).
    await db.query('VACUUM ANALYZE contacts');
    console.log(`seeded ${CONTACTS} + ${Math.round(CONTACTS / 5)} contacts in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const sample = await db.query('SELECT name, phone, email FROM contacts WHERE org_id = $1 ORDER BY id LIMIT 200', [big.user.orgId]);
    await db.end();

    const q = (params) => `/api/v1/contacts?${new URLSearchParams(params)}`;
    const auth = [`Authorization: Bearer ${big.token}`];
    // Searches as people type them: full names (folded or accented), a given name, a family name,
    // phone fragments in national spelling, email fragments.
    const names = sample.rows.slice(0, 50).map((r) => r.name);
    const fold = (t) => t.normalize('NFD').replace(/\p{M}/gu, '').replace(/đ/g, 'd').replace(/Đ/g, 'D').toLowerCase();
    // Full names match a few dozen contacts; a single given or family name matches 2.7k-5k of the 100k.
    const fullNameSearches = [...names.map((n) => q({ search: n })), ...names.map((n) => q({ search: fold(n) }))];
    const wordSearches = [...GIVEN.map((g) => q({ search: g })), ...FAMILY.map((f) => q({ search: fold(f) }))];
    const phoneSearches = sample.rows.slice(0, 100).flatMap((r) => [q({ search: `0${r.phone.slice(3)}` }), q({ search: r.phone.slice(3, 9) })]);
    const emailSearches = sample.rows.slice(100, 200).map((r) => q({ search: r.email.split('@')[0] }));
    const filters = [
      q({ status: 'lead', sortBy: 'leadScore' }),
      q({ hasChatnet: 'true', source: 'chatnet' }),
      q({ tag: 'vip', scoreMin: '50' }),
      q({ threadType: 'user', hasChatnet: 'unknown' }),
    ];

    if (HOLD) {
      console.log(JSON.stringify({ url, token: big.token, orgId: big.user.orgId, crmDb }));
      await new Promise((resolve) => process.once('SIGINT', resolve));
      return;
    }
    await fetch(`${url}${q({ search: 'warm-up' })}`, { headers: { authorization: `Bearer ${big.token}` } });
    const results = [
      // The floor of this machine at this moment: the same hops (JWT, gateway, gRPC, one indexed SELECT), tiny body.
      wrk(url, auth, ['/api/v1/profile'], 'baseline: GET /api/v1/profile (identity, one row)'),
      wrk(url, auth, [q({})], 'list, default (lastActivity desc, page 1, limit 50)'),
      wrk(
        url,
        auth,
        [1, 2, 5, 20, 100].map((page) => q({ page: String(page), sortBy: 'createdAt' })),
        'list, sortBy createdAt, pages 1-100',
      ),
      wrk(url, auth, filters, 'list, filters (status / hasChatnet+source / tag+scoreMin / threadType+hasChatnet)'),
      wrk(url, auth, fullNameSearches, 'search, full names (accented and unaccented)'),
      wrk(url, auth, wordSearches, 'search, one given or family name (2.7k-5k matches)'),
      wrk(url, auth, phoneSearches, 'search, phone (full national number, 6-digit beginning)'),
      wrk(url, auth, emailSearches, 'search, email fragment'),
    ];
    // The same count-heavy scenarios with every total counted (LIST_TOTAL_CACHE_MS=0).
    await restart('crm', { LIST_TOTAL_CACHE_MS: '0' });
    await waitReady(url);
    // The gateway's channel to the restarted crm reconnects on its own schedule: wait for a real answer.
    for (let tries = 0; ; tries++) {
      const res = await fetch(`${url}${q({ search: 'warm-up' })}`, { headers: { authorization: `Bearer ${big.token}` } });
      if (res.ok) break;
      if (tries > 100) throw new Error(`crm not answering after restart: ${res.status}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    results.push(
      wrk(url, auth, filters, 'no total cache: list, filters'),
      wrk(url, auth, fullNameSearches, 'no total cache: search, full names'),
      wrk(url, auth, wordSearches, 'no total cache: search, one given or family name'),
    );
    if (WRITE) writeResults(results, { contacts: CONTACTS, neighbours: Math.round(CONTACTS / 5) });
  } catch (err) {
    console.error(err);
    process.exitCode = 1;
  } finally {
    await stopAll();
    // Everything this run created on the shared servers goes: databases, crm's queues and the exchange, Redis keys.
    const admin = new pg.Client({ connectionString: PG });
    await admin.connect();
    for (const u of [crmDb, identityDb]) await admin.query(`DROP DATABASE IF EXISTS "${new URL(u).pathname.slice(1)}" WITH (FORCE)`);
    await admin.end();
    // Every queue of the exchange by prefix: crm's consumers come and go (scoring, analytics, ...).
    await require('@crm/testing')
      .deleteRabbitPrefix(AMQP, env.EVENTS_EXCHANGE)
      .catch((err) => console.error(`could not delete RabbitMQ topology ${env.EVENTS_EXCHANGE}: ${err.message}`));
    await require('@crm/testing')
      .clearRedisPrefix(env.REDIS_PREFIX)
      .catch((err) => console.error(`could not clear Redis prefix ${env.REDIS_PREFIX}: ${err.message}`));
  }
}

function writeResults(results, meta) {
  const file = path.join(root, 'bench', 'RESULTS.md');
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const rows = results.map(
    (r) => `| ${r.label} | ${r.paths} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.errors} | ${r.load.toFixed(1)} |`,
  );
  const section = [
    '## crm',
    '',
    `Contacts list and search through the gateway (JWT → gateway → gRPC → crm → PostgreSQL), ${meta.contacts.toLocaleString('en')} contacts in one`,
    `organization plus ${meta.neighbours.toLocaleString('en')} in a neighbouring one. Tool: wrk 4.1 (Debian), ${CONNECTIONS} connections, 2 threads,`,
    `${DURATION} s per scenario, load generator on the same 2-core machine as PostgreSQL, Redis, the three Node processes and other`,
    `engineers' work (absolute numbers drift 10-25% between runs; the last column shows how busy the machine was).`,
    'Each scenario cycles through its list of request paths. The first rows run with the default total cache (totals',
    'of 1,000+ matches reused for up to 10 s while the org gains or loses no contact, see services/crm/README.md); the',
    '"no total cache" rows repeat the count-heavy scenarios with LIST_TOTAL_CACHE_MS=0, every total counted.',
    `Measured ${when} UTC.`,
    '',
    '```',
    `node bench/crm/run.mjs --duration ${DURATION} --connections ${CONNECTIONS} --contacts ${meta.contacts} --write`,
    '```',
    '',
    '| scenario | paths | req/s | p50 ms | p99 ms | non-2xx | machine load (1 min) after |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
  writeResultsSection(file, 'crm', section);
}

main().catch(async (err) => {
  console.error(err);
  await stopAll().catch(() => undefined);
  process.exit(1);
});
