// CSV import of contacts through the gateway (issue #15): a 50,000-row file with custom fields and ~5% bad rows,
// POSTed as multipart; how long it takes, and the gateway process's peak memory while it streams.
//
//   node bench/import/run.mjs [--rows 50000] [--gateway-heap-mb N] [--write]
//
// Needs: built dist of identity, crm and gateway (npm run build), PostgreSQL/RabbitMQ/Redis at their local defaults
// (or DATABASE_URL/AMQP_URL/REDIS_URL). Starts identity, crm and the gateway as separate Node processes on fresh
// databases, signs up an org, defines three custom fields, writes the CSV to a temporary file and streams it up
// from disk (so this process never holds the file either). First a file a tenth the size goes into another org
// (peak memory for a small file: the reference that shows whether memory grows with the file), then the big one,
// the same file again (every row now matches: the update path), and a dry run. The gateway's peak RSS is VmHWM
// from /proc/<pid>/status (Linux), read before the first upload (baseline) and after each one. --gateway-heap-mb
// caps the gateway's V8 old space (--max-old-space-size): V8 grows its heap lazily when nothing forces a collection,
// so an uncapped peak says little; imports that pass under a small cap show that memory does not grow with the file.
// --write replaces the "## import" section of bench/RESULTS.md.
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { cpuSeconds } from '../lib/cpu.mjs';
import { benchDbUrl, freePort, processGroup, root, signupOrg, waitReady, identityCrmEnv } from '../lib/processes.mjs';
import { writeResultsSection } from '../lib/results.mjs';

const require = createRequire(path.join(root, 'package.json'));
const pg = require('pg');

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const ROWS = Number(opt('rows', '50000'));
const WRITE = args.includes('--write');
const HEAP_MB = opt('gateway-heap-mb', undefined);

const PG = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const AMQP = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const run = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
const dbUrl = benchDbUrl(PG, run);
const { children, launch, stopAll } = processGroup();

/** kB from /proc/<pid>/status: VmHWM (peak resident set) or VmRSS (now). */
function memoryKb(pid, field) {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

const FAMILY = ['Nguyễn', 'Trần', 'Lê', 'Phạm', 'Hoàng', 'Vũ', 'Đặng', 'Smith', 'Garcia'];
const GIVEN = ['An', 'Bình', 'Cường', 'Hà', 'Linh', 'Mai', 'Nam', 'Thảo', 'Emma', 'Liam'];

/** The file: ~5% bad rows (bad phone, bad email, a tier that is no option, a score that is no number, spread evenly). */
function writeCsv(file, rows) {
  const lines = ['\uFEFFname,phone,email,tags,status,tier,score,vip'];
  let bad = 0;
  for (let n = 1; n <= rows; n++) {
    const name = `${FAMILY[n % FAMILY.length]} ${GIVEN[(n * 7) % GIVEN.length]} ${n}`;
    let phone = `+849${String(n).padStart(8, '0')}`;
    let email = `contact.${n}@mail.example`;
    let tier = ['Gold', 'Silver', 'Bronze', ''][n % 4];
    let score = String((n * 37) % 1000);
    if (n % 20 === 0) {
      bad++;
      [() => (phone = 'call me'), () => (email = 'not-an-email'), () => (tier = 'Platinum'), () => (score = 'many')][(n / 20) % 4]();
    }
    const quoted = n % 10 === 0 ? `"${name}, Jr."` : name;
    lines.push(
      `${quoted},${phone},${email},${n % 3 === 0 ? 'vip;hanoi' : 'lead'},${['new', 'lead', 'customer'][n % 3]},${tier},${score},${n % 2 === 0}`,
    );
  }
  writeFileSync(file, `${lines.join('\r\n')}\r\n`);
  return bad;
}

/** multipart/form-data with the file streamed from disk (fetch sends a ReadableStream body with duplex: half). */
function multipartBody(file) {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="contacts.csv"\r\nContent-Type: text/csv\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* parts() {
    yield head;
    for await (const chunk of createReadStream(file, { highWaterMark: 64 * 1024 })) yield chunk;
    yield tail;
  }
  return { body: Readable.toWeb(Readable.from(parts())), type: `multipart/form-data; boundary=${boundary}` };
}

async function defineFields(url, token) {
  for (const f of [
    { key: 'tier', label: 'Tier', type: 'select', options: ['Gold', 'Silver', 'Bronze'] },
    { key: 'score', label: 'Score', type: 'number' },
    { key: 'vip', label: 'VIP', type: 'boolean' },
  ]) {
    const res = await fetch(`${url}/api/v1/contact-fields`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(f),
    });
    if (res.status !== 201) throw new Error(`contact field ${res.status}`);
  }
}

async function importOnce(url, token, file, query = '') {
  const { body, type } = multipartBody(file);
  const started = process.hrtime.bigint();
  const res = await fetch(`${url}/api/v1/contacts/import${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': type },
    body,
    duplex: 'half',
  });
  const out = await res.json();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (res.status !== 200) throw new Error(`import ${res.status}: ${JSON.stringify(out)}`);
  return { seconds, created: out.created, updated: out.updated, failed: out.failed, errors: out.errors.length };
}

async function main() {
  const ports = { identity: await freePort(), crm: await freePort(), gateway: await freePort() };
  const env = await identityCrmEnv(run, ports);
  const crmDb = dbUrl('crm');
  const identityDb = dbUrl('identity');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'import-bench-'));
  const file = path.join(dir, 'contacts.csv');
  const small = path.join(dir, 'small.csv');
  const smallRows = Math.max(1, Math.round(ROWS / 10));
  try {
    const bad = writeCsv(file, ROWS);
    writeCsv(small, smallRows);
    launch('identity', { ...env, DATABASE_URL: identityDb, GRPC_PORT: String(ports.identity) });
    const crm = launch('crm', { ...env, DATABASE_URL: crmDb, GRPC_PORT: String(ports.crm) });
    const gateway = launch('gateway', {
      ...env,
      HOST: '127.0.0.1',
      PORT: String(ports.gateway),
      SERVICES: 'identity,crm',
      ...(HEAP_MB ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=${HEAP_MB}`.trim() } : {}),
    });
    const url = `http://127.0.0.1:${ports.gateway}`;
    await waitReady(url);
    const { token } = await signupOrg(url, run, 'Importer');
    const reference = (await signupOrg(url, run, 'Reference')).token;
    await defineFields(url, token);
    await defineFields(url, reference);
    const baseline = { hwm: memoryKb(gateway.pid, 'VmHWM'), rss: memoryKb(gateway.pid, 'VmRSS') };
    const results = [];
    for (const [label, as, csv, rows, query] of [
      [`reference: a tenth of the file (${smallRows.toLocaleString('en')} rows, another org)`, reference, small, smallRows, ''],
      ['first import (creates)', token, file, ROWS, ''],
      ['same file again (updates)', token, file, ROWS, ''],
      ['dry run', token, file, ROWS, '?dryRun=true'],
    ]) {
      const cpu = { gateway: cpuSeconds(gateway.pid), crm: cpuSeconds(crm.pid) };
      const r = await importOnce(url, as, csv, query);
      results.push({
        label,
        rows,
        ...r,
        peakKb: memoryKb(gateway.pid, 'VmHWM'),
        cpuGateway: cpuSeconds(gateway.pid) - cpu.gateway,
        cpuCrm: cpuSeconds(crm.pid) - cpu.crm,
      });
      console.log(label, results.at(-1));
    }
    const load = os.loadavg()[0];
    const report = { rows: ROWS, bad, bytes: statSync(file).size, baseline, results, load, heapMb: HEAP_MB };
    console.log(JSON.stringify(report, null, 2));
    if (WRITE) writeResults(report);
  } catch (err) {
    console.error(err);
    process.exitCode = 1;
  } finally {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
    const admin = new pg.Client({ connectionString: PG });
    await admin.connect();
    for (const u of [crmDb, identityDb]) await admin.query(`DROP DATABASE IF EXISTS "${new URL(u).pathname.slice(1)}" WITH (FORCE)`);
    await admin.end();
    await require('@crm/testing')
      .deleteRabbitPrefix(AMQP, env.EVENTS_EXCHANGE)
      .catch((err) => console.error(`could not delete RabbitMQ topology ${env.EVENTS_EXCHANGE}: ${err.message}`));
    await require('@crm/testing')
      .clearRedisPrefix(env.REDIS_PREFIX)
      .catch((err) => console.error(`could not clear Redis prefix ${env.REDIS_PREFIX}: ${err.message}`));
  }
}

function writeResults(r) {
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const mb = (kb) => (kb / 1024).toFixed(1);
  const section = [
    '## import',
    '',
    `Command: \`node bench/import/run.mjs --rows ${r.rows}${r.heapMb ? ` --gateway-heap-mb ${r.heapMb}` : ''} --write\` (full size: 50,000 rows). ` +
      `Identity, crm and the gateway as separate processes from dist, on the same 2 cores as this script; measured ${when} UTC, 1-minute load average at the end ${r.load.toFixed(1)} (other work shares this machine).`,
    '',
    `One organization with three custom fields (select, number, boolean); a ${(r.bytes / 1024 / 1024).toFixed(1)} MB CSV of ${r.rows.toLocaleString('en')} rows ` +
      `(${r.bad.toLocaleString('en')} bad: phone, email, option or number; names with quotes and commas every tenth row), streamed from disk as multipart/form-data. ` +
      'The gateway parses the upload and the CSV as they arrive and sends crm batches of 500 rows over gRPC (ImportContacts); each batch is one transaction ' +
      '(contacts, activities, contact.created/updated in the outbox). Time is the whole request, upload to answer. Peak RSS is the gateway process’s VmHWM, ' +
      'which only grows: each row shows the peak so far, so the step from the reference (a tenth of the rows) to the full file is what the file’s size costs.',
    '',
    `Gateway before the first upload: RSS ${mb(r.baseline.rss)} MB, peak ${mb(r.baseline.hwm)} MB.` +
      (r.heapMb
        ? ` Its V8 old space was capped at ${r.heapMb} MB (\`--max-old-space-size\`): uncapped, V8 grows the heap lazily and the peak climbs run after run ` +
          'although nothing is kept; every import below completed under the cap.'
        : ''),
    '',
    '| run | seconds | rows/s | created | updated | failed | gateway peak RSS MB | gateway CPU s | crm CPU s |',
    '|---|---|---|---|---|---|---|---|---|',
    ...r.results.map(
      (x) =>
        `| ${x.label} | ${x.seconds.toFixed(1)} | ${Math.round(x.rows / x.seconds)} | ${x.created} | ${x.updated} | ${x.failed} | ${mb(x.peakKb)} | ${x.cpuGateway.toFixed(1)} | ${x.cpuCrm.toFixed(1)} |`,
    ),
    '',
  ].join('\n');
  writeResultsSection(path.join(root, 'bench', 'RESULTS.md'), 'import', section);
}

main();
