// The gateway's CSV code (issue #30), in one process, in the same run. Reading: the hand-written reader it had until
// commit c3f89da against the CsvReader on csv-parse that replaced it (services/gateway/src/csv/csv-reader.ts).
// Writing: the hand-written csvLine the export still uses against csv-stringify set up to write the same bytes (the
// replacement measured and not taken: services/gateway/README.md, "Design decisions").
//
//   node bench/csv/run.mjs [--rows 100000] [--rounds 7] [--write]
//
// Needs: the gateway built (npm run build, or npx turbo run build --filter=@crm/gateway) and the repository's git
// history (the hand-written reader is read from commit c3f89da and compiled here with TypeScript's transpileModule).
// Parse: a contacts file like bench/import's (BOM, CRLF, names with quotes and commas, Vietnamese text) with a
// two-line quoted note every 50th row, fed in 64 KiB chunks (as busboy hands the upload over) through each reader,
// records counted; both must give the same records with the same lines. Write: export rows (neutralised phones,
// quotes, commas, a line break every 50th row) turned into CSV a page of 500 at a time (as GET /contacts/export
// does), and with csv-stringify's stream a record at a time; all must give the same bytes. Each variant runs once per round, in alternating order; the figure is the
// median CPU time of the rounds (process.cpuUsage, this single thread), so other work on the machine moves it less
// than wall time. --write replaces the "## csv" section of bench/RESULTS.md.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { root } from '../lib/processes.mjs';
import { writeResultsSection } from '../lib/results.mjs';

const require = createRequire(path.join(root, 'package.json'));
const ts = require('typescript');

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const ROWS = Number(opt('rows', '100000'));
const ROUNDS = Number(opt('rounds', '7'));
const WRITE = args.includes('--write');
const HAND_WRITTEN = 'c3f89da';
const CHUNK = 64 * 1024;
const PAGE = 500;

/** The hand-written reader as it was, compiled to CommonJS in a temporary folder. */
function handWrittenReader() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-csv-'));
  const source = execFileSync('git', ['show', `${HAND_WRITTEN}:services/gateway/src/csv/csv-reader.ts`], { cwd: root, encoding: 'utf8' });
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } });
  writeFileSync(path.join(dir, 'csv-reader.js'), outputText);
  const reader = require(path.join(dir, 'csv-reader.js'));
  rmSync(dir, { recursive: true });
  return reader;
}

const FAMILY = ['Nguyễn', 'Trần', 'Lê', 'Phạm', 'Hoàng', 'Vũ', 'Đặng', 'Smith', 'Garcia'];
const GIVEN = ['An', 'Bình', 'Cường', 'Hà', 'Linh', 'Mai', 'Nam', 'Thảo', 'Emma', 'Liam'];

function importFile(rows) {
  const lines = ['\uFEFFname,phone,email,tags,status,tier,score,vip,note'];
  for (let n = 1; n <= rows; n++) {
    const name = `${FAMILY[n % FAMILY.length]} ${GIVEN[(n * 7) % GIVEN.length]} ${n}`;
    const quoted = n % 10 === 0 ? `"${name}, ""Jr."""` : name;
    const note = n % 50 === 0 ? '"called twice,\r\nwants a quote"' : 'ok';
    lines.push(
      `${quoted},+849${String(n).padStart(8, '0')},contact.${n}@mail.example,${n % 3 === 0 ? 'vip;hanoi' : 'lead'},${['new', 'lead', 'customer'][n % 3]},${['Gold', 'Silver', ''][n % 3]},${(n * 37) % 1000},${n % 2 === 0},${note}`,
    );
  }
  const bytes = Buffer.from(`${lines.join('\r\n')}\r\n`, 'utf8');
  const chunks = [];
  for (let i = 0; i < bytes.length; i += CHUNK) chunks.push(bytes.subarray(i, i + CHUNK));
  return { bytes, chunks };
}

function exportRows(rows) {
  const out = [];
  for (let n = 1; n <= rows; n++) {
    const name =
      n % 10 === 0
        ? `${FAMILY[n % FAMILY.length]} "${GIVEN[n % GIVEN.length]}", ${n}`
        : `${FAMILY[n % FAMILY.length]} ${GIVEN[n % GIVEN.length]} ${n}`;
    const note = n % 50 === 0 ? 'called twice\nwants a quote' : n % 7 === 0 ? '=HYPERLINK("x")' : '';
    out.push([
      name,
      `+849${String(n).padStart(8, '0')}`,
      `contact.${n}@mail.example`,
      n % 3 === 0 ? 'vip;hanoi' : 'lead',
      'new',
      String((n * 37) % 1000),
      n % 2 === 0 ? 'true' : 'false',
      note,
    ]);
  }
  return out;
}

async function readAll(reader, chunks) {
  const records = [];
  for await (const r of Readable.from(chunks).pipe(reader)) records.push(r);
  return records;
}

/** Each page as one string, as the export route writes it. */
function writePages(rows, page) {
  const out = [];
  for (let i = 0; i < rows.length; i += PAGE) out.push(page(rows.slice(i, i + PAGE), i === 0));
  return out.join('');
}

/** Every record written to a Stringifier (the library's stream), its output drained by a sink. */
async function writeStream(rows, makeStream) {
  const parts = [];
  let writes = 0;
  const sink = new Writable({
    write(chunk, _enc, done) {
      writes++;
      parts.push(chunk);
      done();
    },
  });
  const csv = makeStream();
  csv.pipe(sink);
  for (const r of rows) if (!csv.write(r)) await new Promise((resolve) => csv.once('drain', resolve));
  csv.end();
  await new Promise((resolve) => sink.on('finish', resolve));
  return { text: Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from(p)))).toString('utf8'), writes };
}

async function measure(fn) {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const result = await fn();
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  const cpu = process.cpuUsage(cpu0);
  return { cpu: (cpu.user + cpu.system) / 1000, wall, result };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const oldReader = handWrittenReader();
const gatewayDist = path.join(root, 'services/gateway/dist/csv');
const { CsvReader } = require(path.join(gatewayDist, 'csv-reader.js'));
const { csvLine, neutralise, UTF8_BOM } = require(path.join(gatewayDist, 'csv-writer.js'));
const fromGateway = (name) => require(require.resolve(name, { paths: [path.join(root, 'services/gateway')] }));
const { Parser } = fromGateway('csv-parse');
const { stringify } = fromGateway('csv-stringify');
const stringifySync = fromGateway('csv-stringify/sync').stringify;
/** csv-stringify set up to write csvLine's bytes (as services/gateway/src/csv/csv.test.ts checks); a new object each time, since csv-stringify fills defaults into `cast`. */
const stringifyFormat = (bom) => ({
  bom,
  record_delimiter: '\r\n',
  quote_record_delimiter: true,
  quoted_match: /^\s|\s$/,
  cast: { string: neutralise },
});

const file = importFile(ROWS);
const rows = exportRows(ROWS);

const variants = {
  'parse: hand-written CsvReader': () => readAll(new oldReader.CsvReader(), file.chunks),
  'parse: CsvReader on csv-parse': () => readAll(new CsvReader(), file.chunks),
  'parse: csv-parse alone (same options, no line numbers)': () =>
    readAll(
      new Parser({
        bom: true,
        record_delimiter: ['\r\n', '\n', '\r'],
        relax_quotes: true,
        relax_column_count: true,
        max_record_size: 256 * 1024,
        ignore_last_delimiters: 501,
      }),
      file.chunks,
    ),
  'write: hand-written csvLine, a page at a time': async () =>
    writePages(rows, (page, first) => (first ? UTF8_BOM : '') + page.map(csvLine).join('')),
  'write: csv-stringify, a page at a time': async () => writePages(rows, (page, first) => stringifySync(page, stringifyFormat(first))),
  'write: csv-stringify stream, a record at a time': () => writeStream(rows, () => stringify(stringifyFormat(true))),
};

// Same output, or the comparison means nothing.
const oldRecords = await variants['parse: hand-written CsvReader']();
const newRecords = await variants['parse: CsvReader on csv-parse']();
if (JSON.stringify(oldRecords) !== JSON.stringify(newRecords)) throw new Error('the two readers disagree on this file');
const oldText = await variants['write: hand-written csvLine, a page at a time']();
const newText = await variants['write: csv-stringify, a page at a time']();
const streamed = await variants['write: csv-stringify stream, a record at a time']();
if (oldText !== newText || oldText !== streamed.text) throw new Error('the writers disagree on these rows');

const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, { cpu: [], wall: [] }]));
for (let round = 0; round < ROUNDS; round++) {
  const names = Object.keys(variants);
  if (round % 2 === 1) names.reverse();
  for (const name of names) {
    global.gc?.();
    const m = await measure(variants[name]);
    samples[name].cpu.push(m.cpu);
    samples[name].wall.push(m.wall);
  }
}

const cpuOf = (name) => median(samples[name].cpu);
const OLD_READER = 'parse: hand-written CsvReader';
const KEPT_WRITER = 'write: hand-written csvLine, a page at a time';
const ratio = (name, base) => (cpuOf(name) / cpuOf(base)).toFixed(2);
const load = os.loadavg()[0];
const table = [
  '| variant | median CPU ms | median wall ms | rows/s (CPU) | CPU ratio to the hand-written one |',
  '|---|---|---|---|---|',
  ...Object.keys(variants).map((name) => {
    const base = name.startsWith('parse') ? OLD_READER : KEPT_WRITER;
    return `| ${name} | ${cpuOf(name).toFixed(0)} | ${median(samples[name].wall).toFixed(0)} | ${Math.round(ROWS / (cpuOf(name) / 1000)).toLocaleString('en-US')} | ${ratio(name, base)} |`;
  }),
];
const section = [
  '## csv',
  '',
  `Command: \`node bench/csv/run.mjs --rows ${ROWS} --rounds ${ROUNDS}${WRITE ? ' --write' : ''}\` (one process; the hand-written reader read from commit ${HAND_WRITTEN}, the CsvReader on csv-parse and the hand-written csvLine the export keeps from services/gateway/dist). Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${os.cpus().length} cores shared with other work; 1-minute load average at the end ${load.toFixed(1)}.`,
  '',
  `Parse: ${ROWS.toLocaleString('en-US')} data rows, ${(file.bytes.length / 1e6).toFixed(1)} MB, in ${file.chunks.length} chunks of 64 KiB; both readers gave the same ${newRecords.length.toLocaleString('en-US')} records (lines included). Write: ${ROWS.toLocaleString('en-US')} export rows, pages of ${PAGE}; all three writers gave the same ${(Buffer.byteLength(newText) / 1e6).toFixed(1)} MB (the stream variant in ${streamed.writes.toLocaleString('en-US')} chunks, one per record, against ${Math.ceil(ROWS / PAGE)} for a page at a time). Median of ${ROUNDS} rounds, alternating order.`,
  '',
  ...table,
  '',
  `Parse, new/old CPU: **${ratio('parse: CsvReader on csv-parse', OLD_READER)}** (csv-parse replaced the hand-written reader). Write, csv-stringify/hand-written CPU: **${ratio('write: csv-stringify, a page at a time', KEPT_WRITER)}** a page at a time, **${ratio('write: csv-stringify stream, a record at a time', KEPT_WRITER)}** as a stream (the hand-written csvLine stays).`,
  '',
].join('\n');
console.log(section);
if (WRITE) writeResultsSection(path.join(root, 'bench/RESULTS.md'), 'csv', section);
