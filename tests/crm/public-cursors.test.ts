import { randomUUID } from 'node:crypto';
import { Client } from '../support/http';
import { cursorBody, forgedCursor, pageThrough } from '../support/cursor-paging';
import { CrmStack, Org, publicClient, startCrmStack } from './crm-support';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

// Issue #15: the public contact and appointment lists page by opaque cursor (nextCursor, null on the last page)
// and sync incrementally with updatedSince (updatedAt ascending, then id).
describe('public API cursors: contacts and appointments', () => {
  let crm: CrmStack;
  let acme: Org;
  let globex: Org;
  let pub: Client;
  let theirs: Client;
  /** Acme's contacts in the order they were created (updatedAt ascending). */
  const made: string[] = [];
  let batchStart: string;
  let globexIds: string[];

  beforeAll(async () => {
    crm = await startCrmStack();
    acme = await crm.newOrg('Acme');
    globex = await crm.newOrg('Globex');
    pub = await publicClient(crm.api, acme.owner);
    theirs = await publicClient(crm.api, globex.owner);
    // One contact well before the batch, so updatedSince has something to leave out.
    await pub.post('/api/public/contacts', { fullName: 'Before The Batch' });
    await sleep(20);
    for (let i = 0; i < 7; i++) {
      const c = await pub.post('/api/public/contacts', { fullName: `Cursor Contact ${i}` });
      expect(c.status).toBe(201);
      if (i === 0) batchStart = c.body.updatedAt;
      made.push(c.body.id);
    }
    globexIds = [];
    for (let i = 0; i < 3; i++) globexIds.push((await theirs.post('/api/public/contacts', { fullName: `Globex ${i}` })).body.id);
  });
  afterAll(() => crm.stop());

  it('GET /api/public/contacts pages in its usual order with no overlap or gap; nextCursor is null on the last page', async () => {
    const all = await pub.get('/api/public/contacts?limit=100');
    expect(all.status).toBe(200);
    expect(all.body.nextCursor).toBeNull();
    expect(all.body.contacts).toHaveLength(8);
    const pages = await pageThrough(pub, '/api/public/contacts?limit=3', 'contacts');
    expect(pages.map((p) => p.length)).toEqual([3, 3, 2]);
    // The same rows in the same order as one big page: nothing repeated, nothing skipped.
    expect(pages.flat()).toEqual(ids(all.body.contacts));
    // An exact fit ends on a full page with nextCursor null, not on an empty page after it.
    const even = await pageThrough(pub, '/api/public/contacts?limit=4', 'contacts');
    expect(even.map((p) => p.length)).toEqual([4, 4]);
  });

  it('filters apply on every page (search)', async () => {
    const pages = await pageThrough(pub, `/api/public/contacts?search=${encodeURIComponent('Cursor Contact')}&limit=2`, 'contacts');
    expect(pages.flat().sort()).toEqual([...made].sort());
  });

  it('updatedSince lists what changed since then, oldest change first; a record updated while paging comes again at the end', async () => {
    const first = await pub.get(`/api/public/contacts?updatedSince=${encodeURIComponent(batchStart)}&limit=2`);
    expect(first.status).toBe(200);
    expect(ids(first.body.contacts)).toEqual(made.slice(0, 2));
    expect(cursorBody(first.body.nextCursor)).toEqual({ k: 'contacts.updatedAt', v: expect.any(String), id: made[1], s: batchStart });

    const seen: string[] = [...ids(first.body.contacts)];
    let cursor: string | null = first.body.nextCursor;
    let page = 0;
    while (cursor) {
      const res = await pub.get(`/api/public/contacts?limit=2&cursor=${encodeURIComponent(cursor)}`);
      expect(res.status).toBe(200);
      seen.push(...ids(res.body.contacts));
      cursor = res.body.nextCursor;
      if (page++ === 0) {
        // Mid-sync: one record not read yet (made[5]) and one already read (made[0]) change.
        expect((await pub.put(`/api/public/contacts/${made[5]}`, { notes: 'changed mid-sync' })).status).toBe(200);
        expect((await pub.put(`/api/public/contacts/${made[0]}`, { notes: 'changed mid-sync' })).status).toBe(200);
      }
    }
    // Every record exactly once, but the one read before its change, which comes again with the change.
    expect(seen).toEqual([made[0], made[1], made[2], made[3], made[4], made[6], made[5], made[0]]);

    // Nothing changed after the last change: an empty page, no cursor.
    const last = await pub.get(`/api/public/contacts/${made[0]}`);
    const later = new Date(Date.parse(last.body.updatedAt) + 1).toISOString();
    expect((await pub.get(`/api/public/contacts?updatedSince=${later}`)).body).toEqual({ contacts: [], nextCursor: null });
  });

  it('400 naming cursor for a malformed, altered or foreign cursor; 400 naming updatedSince for a bad time', async () => {
    const first = await pub.get('/api/public/contacts?limit=2');
    const good = cursorBody(first.body.nextCursor);
    const bad = [
      'not a cursor!',
      forgedCursor('just a string'),
      Buffer.from('{not json', 'utf8').toString('base64url'),
      forgedCursor({ ...good, v: "2024-01-01'; DROP TABLE contacts;--" }),
      forgedCursor({ ...good, id: 'nope' }),
      forgedCursor({ ...good, extra: 1 }),
      forgedCursor({ ...good, k: 'appointments.scheduledAt' }),
      forgedCursor({ ...good, k: 'contacts.lastActivity', s: '2024-01-01T00:00:00.000Z' }),
      'x'.repeat(2000),
    ];
    for (const cursor of bad) {
      const res = await pub.get(`/api/public/contacts?cursor=${encodeURIComponent(cursor)}`);
      expect([cursor, res.status]).toEqual([cursor, 400]);
      expect(res.body.error.details[0].field).toBe('cursor');
    }
    for (const since of ['yesterday', '2024-13-01', '2024-02-30T00:00:00Z', '0000-01-01T00:00:00Z']) {
      const res = await pub.get(`/api/public/contacts?updatedSince=${encodeURIComponent(since)}`);
      expect([since, res.status]).toEqual([since, 400]);
      expect(res.body.error.details[0].field).toBe('updatedSince');
    }
    // A cursor carries its updatedSince: another one beside it is refused.
    const synced = await pub.get(`/api/public/contacts?updatedSince=${encodeURIComponent(batchStart)}&limit=2`);
    const clash = await pub.get(`/api/public/contacts?updatedSince=2020-01-01T00:00:00Z&cursor=${synced.body.nextCursor}`);
    expect(clash.status).toBe(400);
    expect(clash.body.error.details[0].field).toBe('updatedSince');
    expect((await pub.get(`/api/public/contacts?updatedSince=${encodeURIComponent(batchStart)}&cursor=${synced.body.nextCursor}`)).status).toBe(200);
  });

  it("another org's cursor shows only the caller's own records", async () => {
    const acmeCursor = (await pub.get('/api/public/contacts?limit=1')).body.nextCursor;
    const res = await theirs.get(`/api/public/contacts?limit=100&cursor=${encodeURIComponent(acmeCursor)}`);
    expect(res.status).toBe(200);
    for (const id of ids(res.body.contacts)) expect(globexIds).toContain(id);
    const syncCursor = (await pub.get(`/api/public/contacts?limit=1&updatedSince=2000-01-01`)).body.nextCursor;
    const synced = await pageThrough(theirs, `/api/public/contacts?limit=100&cursor=${encodeURIComponent(syncCursor)}`, 'contacts');
    // The position came from Acme's oldest change; Globex's records all changed later, and only they are listed.
    expect(synced.flat().sort()).toEqual([...globexIds].sort());
  });

  it('without an API key: 401', async () => {
    expect((await crm.api.get('/api/public/contacts?cursor=abc')).status).toBe(401);
    expect((await crm.api.get('/api/public/appointments?updatedSince=2024-01-01')).status).toBe(401);
  });

  describe('GET /api/public/appointments', () => {
    const appts: string[] = [];
    let since: string;

    beforeAll(async () => {
      // Created out of date order: the usual order is the agenda (appointmentDate), updatedSince the changes.
      for (const day of ['05', '01', '04', '02', '03']) {
        const a = await pub.post('/api/public/appointments', { contactId: made[1], appointmentDate: `2032-07-${day}`, appointmentTime: '10:00' });
        expect(a.status).toBe(201);
        if (appts.length === 0) since = a.body.updatedAt;
        appts.push(a.body.id);
      }
    });

    it('pages the agenda (earliest first) with no overlap or gap, and accepts limit', async () => {
      const pages = await pageThrough(pub, '/api/public/appointments?from=2032-07-01&to=2032-07-31&limit=2', 'appointments');
      expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
      expect(pages.flat()).toEqual([appts[1], appts[3], appts[4], appts[2], appts[0]]);
      const one = await pub.get('/api/public/appointments?from=2032-07-01&to=2032-07-31');
      expect(one.body.nextCursor).toBeNull();
      expect(ids(one.body.appointments)).toEqual(pages.flat());
    });

    it('updatedSince walks changes in order; an appointment rescheduled mid-sync comes last', async () => {
      const pages = await pageThrough(
        pub,
        `/api/public/appointments?updatedSince=${encodeURIComponent(since)}&limit=2`,
        'appointments',
        async (i) => {
          if (i === 0) expect((await acme.owner.put(`/api/v1/appointments/${appts[3]}`, { status: 'completed' })).status).toBe(200);
        },
      );
      expect(pages.flat()).toEqual([appts[0], appts[1], appts[2], appts[4], appts[3]]);
    });

    it('a contacts cursor is refused here (400 naming cursor); another org sees none of these', async () => {
      const contactsCursor = (await pub.get('/api/public/contacts?limit=1')).body.nextCursor;
      const res = await pub.get(`/api/public/appointments?cursor=${encodeURIComponent(contactsCursor)}`);
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('cursor');
      const acmeCursor = (await pub.get('/api/public/appointments?from=2032-07-01&limit=1')).body.nextCursor;
      const foreign = await theirs.get(`/api/public/appointments?cursor=${encodeURIComponent(acmeCursor)}`);
      expect(foreign.status).toBe(200);
      expect(foreign.body.appointments).toEqual([]);
      // A well-formed position that matches no row is simply an empty page.
      const nowhere = forgedCursor({ ...cursorBody(acmeCursor), id: randomUUID() });
      expect((await pub.get(`/api/public/appointments?from=2040-01-01&cursor=${nowhere}`)).body).toEqual({ appointments: [], nextCursor: null });
    });
  });
});
