import { Client } from '../support/http';
import { CrmStack, Org, startCrmStack } from './crm-support';

// The cut-offs of POST /api/v1/contacts/import (issue #15): past CONTACTS_IMPORT_MAX_ROWS data rows (default 50,000)
// or CONTACTS_IMPORT_MAX_BYTES of file (default 64 MB; both asserted in services/gateway/src/config.test.ts) the rest
// is not imported, the answer is still 200 and lists the cut once. The gateway here runs with small limits so the
// files stay small; the rows before the cut are imported (or, with dryRun, counted and not written).
const MAX_ROWS = 20;
const MAX_BYTES = 400;

describe('contacts CSV import: row and size cut-offs', () => {
  let crm: CrmStack;
  let acme: Org;
  let owner: Client;

  async function upload(csv: string, query = '') {
    const fd = new FormData();
    fd.append('file', new Blob([csv], { type: 'text/csv' }), 'contacts.csv');
    const res = await fetch(`${crm.stack.url}/api/v1/contacts/import${query}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acme.token}` },
      body: fd,
    });
    return { status: res.status, body: (await res.json()) as any };
  }
  const namesLike = async (prefix: string) =>
    ((await owner.get(`/api/v1/contacts?limit=100&search=${encodeURIComponent(prefix)}`)).body.data as { name: string }[]).map((c) => c.name).sort();
  const numbered = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix} ${String(i + 1).padStart(4, '0')}`);

  beforeAll(async () => {
    crm = await startCrmStack({ env: { CONTACTS_IMPORT_MAX_ROWS: String(MAX_ROWS), CONTACTS_IMPORT_MAX_BYTES: String(MAX_BYTES) } });
    acme = await crm.newOrg('Acme');
    owner = acme.owner;
  }, 60_000);
  afterAll(() => crm?.stop());

  describe(`more than ${MAX_ROWS} data rows`, () => {
    // Row 3 is bad: it still counts towards the limit. 25 rows in all, far below the byte limit.
    const file = (prefix: string) => ['name,email', ...numbered(prefix, 25).map((name, i) => `${name},${i === 2 ? 'not-an-email' : ''}`)].join('\n');
    const cut = {
      created: MAX_ROWS - 1,
      updated: 0,
      failed: 1 + 5,
      errors: [
        { line: 4, field: 'email', message: 'must be a valid email address' },
        { line: MAX_ROWS + 2, field: 'file', message: `the file has more than ${MAX_ROWS} rows: this row and the ones after it were not imported` },
      ],
    };

    it('imports the rows up to the limit (200); each row after it is counted as failed, the first one listed', async () => {
      const csv = file('Rows');
      expect(Buffer.byteLength(csv)).toBeLessThan(MAX_BYTES);
      const res = await upload(csv);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(cut);
      expect(await namesLike('Rows')).toEqual(numbered('Rows', MAX_ROWS).filter((n) => n !== 'Rows 0003'));
    });

    it('with dryRun=true answers the same and writes nothing', async () => {
      const res = await upload(file('DryRows'), '?dryRun=true');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(cut);
      expect(await namesLike('DryRows')).toEqual([]);
    });

    it(`exactly ${MAX_ROWS} rows are all imported, with nothing listed`, async () => {
      const res = await upload(['name', ...numbered('Exact', MAX_ROWS)].join('\n'));
      expect(res.body).toEqual({ created: MAX_ROWS, updated: 0, failed: 0, errors: [] });
      expect((await namesLike('Exact')).length).toBe(MAX_ROWS);
    });
  });

  describe(`a file larger than ${MAX_BYTES} bytes`, () => {
    // Rows of a fixed width, so where the limit falls is known: the row it cuts through is listed, nothing after it is read.
    // Each file gets its own phone numbers (`series`): a row matching an earlier file's contact would count as updated.
    const header = 'name,phone\n';
    const rowOf = (prefix: string, series: number, i: number) =>
      `${prefix} ${String(i + 1).padStart(4, '0')},0916 ${series}${String(i + 1).padStart(5, '0')}\n`;
    // Every file's names have the same width (5-letter prefixes), so its rows do too.
    const rowBytes = Buffer.byteLength(rowOf('Bytes', 1, 0));
    const whole = Math.floor((MAX_BYTES - header.length) / rowBytes);
    const rows = (prefix: string, series: number, count: number) =>
      header + Array.from({ length: count }, (_, i) => rowOf(prefix, series, i)).join('');
    const cut = {
      created: whole,
      updated: 0,
      failed: 1,
      errors: [{ line: whole + 2, field: 'file', message: `the file is larger than ${MAX_BYTES} bytes; the rest was not read` }],
    };

    it('imports the whole rows before the limit (200) and lists the row it cuts through', async () => {
      // The limit must fall inside a row, and before the row limit.
      expect((MAX_BYTES - header.length) % rowBytes).not.toBe(0);
      expect(whole).toBeLessThan(MAX_ROWS);
      // A file far past the limit (2,000 rows): the rest of the upload is read and dropped, the answer still comes.
      const res = await upload(rows('Bytes', 1, 2000));
      expect(res.status).toBe(200);
      expect(res.body).toEqual(cut);
      expect(await namesLike('Bytes')).toEqual(numbered('Bytes', whole));
    });

    it('with dryRun=true answers the same and writes nothing', async () => {
      const res = await upload(rows('DryBy', 2, 2000), '?dryRun=true');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(cut);
      expect(await namesLike('DryBy')).toEqual([]);
    });

    it(`a file of exactly ${MAX_BYTES} bytes is read whole; one byte more is cut`, async () => {
      const full = rows('Whole', 3, whole);
      const exact = full + 'Whole Last'.padEnd(MAX_BYTES - Buffer.byteLength(full), '.');
      expect(Buffer.byteLength(exact)).toBe(MAX_BYTES);
      expect((await upload(exact)).body).toEqual({ created: whole + 1, updated: 0, failed: 0, errors: [] });

      const over = rows('OverB', 4, whole);
      const res = await upload(over + 'OverB Last'.padEnd(MAX_BYTES - Buffer.byteLength(over) + 1, '.'));
      expect(res.body).toEqual({ ...cut, created: whole });
      expect(await namesLike('OverB')).toEqual(numbered('OverB', whole));
    });
  });
});
