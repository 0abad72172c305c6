import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import { auditEntryFor } from '../support/audit';
import { messageData } from '../support/event-data';
import { Client, email } from '../support/http';
import { addUser, CrmStack, Org, publishEvent, startCrmStack } from './crm-support';

// Custom reports through the gateway: POST /analytics/custom → generating → ready (CSV) or failed, computed
// from real contacts (sources, statuses, dealValues, assignees) and message events; validation, roles,
// isolation, and a report left generating while no worker ran, completed after a restart.

/** RFC 4180 parser (quoted fields, doubled quotes, CRLF), enough to read the reports back. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += ch;
  }
  if (cell !== '' || row.length) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

/** The CSV as records keyed by header. */
function records(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  return rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]])));
}

/** Exact decimal formatting of cents and rates, rounding half up as PostgreSQL's numeric round does. */
const money = (cents: number) => (cents / 100).toFixed(2);
const rate = (customers: number, leads: number) => (leads ? (Math.round((10_000 * customers) / leads) / 100).toFixed(2) : '');
const average = (cents: number, customers: number) => (customers ? money(Math.round(cents / customers)) : '');

const dayOf = (d: Date) => d.toISOString().slice(0, 10);

async function waitForReport(api: Client, id: string) {
  return eventually(async () => {
    const r = await api.get(`/api/v1/analytics/custom/${id}`);
    return r.body.status !== 'generating' && r.body;
  }, 20_000);
}

async function download(api: Client, id: string) {
  const res = await api.get(`/api/v1/analytics/custom/${id}/download`);
  expect(res.status).toBe(200);
  return records(res.body as string);
}

describe('custom reports', () => {
  let crm: CrmStack;
  let acme: Org;
  let globex: Org;
  let owner: Client;
  let lead: { id: string; as: Client };
  let agent: { id: string; as: Client };
  let trickyId: string;
  const today = dayOf(new Date());
  const yesterday = dayOf(new Date(Date.now() - 86_400_000));
  const tomorrow = dayOf(new Date(Date.now() + 86_400_000));
  const range = { dateFrom: yesterday, dateTo: tomorrow };
  let contacts: { id: string; source: string; status: string; cents: number; assignee: string | null }[];
  let createdDay: string;

  beforeAll(async () => {
    crm = await startCrmStack();
    acme = await crm.newOrg('Acme');
    globex = await crm.newOrg('Globex');
    owner = acme.owner;
    lead = await addUser(crm.api, owner, 'team_lead');
    agent = await addUser(crm.api, owner, 'agent');
    // A user whose name a spreadsheet would run as a formula, with a comma and quotes to escape.
    const tricky = await owner.post('/api/v1/users', {
      email: email('tricky'),
      fullName: '=Lee, "Boss"',
      role: 'agent',
      password: 'correct horse battery',
    });
    expect(tricky.status).toBe(201);
    trickyId = tricky.body.id;

    const specs = [
      { name: 'Ann', source: 'website', status: 'customer', dealValue: 1000.5, assignedUserId: lead.id },
      { name: 'Bao', source: 'website', status: 'customer', dealValue: 200.25, assignedUserId: trickyId },
      { name: 'Chi', source: 'website', status: 'lead', dealValue: 5000, assignedUserId: lead.id },
      { name: 'Dan', source: 'manual', status: 'customer', dealValue: 300 },
      { name: 'Em', source: 'manual', status: 'new' },
      { name: 'Phu', source: '-promo', status: 'lost', dealValue: 99.99, assignedUserId: trickyId },
    ];
    contacts = [];
    for (const s of specs) {
      const res = await owner.post('/api/v1/contacts', s);
      expect(res.status).toBe(201);
      contacts.push({
        id: res.body.id,
        source: s.source,
        status: s.status,
        cents: Math.round((s.dealValue ?? 0) * 100),
        assignee: s.assignedUserId ?? null,
      });
      createdDay = res.body.createdAt.slice(0, 10);
    }
    // Another organization's contacts must never be counted.
    await globex.owner.post('/api/v1/contacts', { name: 'Elsewhere', source: 'website', status: 'customer', dealValue: 777 });

    // Messages: two received by Ann yesterday, one sent to Ann and one received from Dan today.
    const conversationId = randomUUID();
    const message = (type: 'message.received' | 'message.sent', contactId: string, sentAt: string) =>
      publishEvent(crm.exchange, type, acme.orgId, messageData(type, { conversationId, contactId, content: 'hi', contentType: 'text', sentAt }));
    const [ann, , , dan] = contacts;
    await message('message.received', ann.id, `${yesterday}T10:00:00.000Z`);
    await message('message.received', ann.id, `${yesterday}T11:00:00.000Z`);
    await message('message.sent', ann.id, `${today}T00:00:01.000Z`);
    await message('message.received', dan.id, `${today}T00:00:02.000Z`);
    await eventually(async () => {
      const [a, d] = await Promise.all([owner.get(`/api/v1/contacts/${ann.id}`), owner.get(`/api/v1/contacts/${dan.id}`)]);
      const n = (r: typeof a) => r.body.activities.filter((x: { type: string }) => x.type.startsWith('message_')).length;
      return n(a) === 3 && n(d) === 1;
    }, 10_000);
  });
  afterAll(() => crm?.stop());

  /** Expected contact metrics of a group of contacts, computed from the test's own data. */
  function expectedContactMetrics(group: typeof contacts) {
    const customers = group.filter((c) => c.status === 'customer');
    const cents = customers.reduce((s, c) => s + c.cents, 0);
    return {
      lead_count: String(group.length),
      customer_count: String(customers.length),
      conversion_rate: rate(customers.length, group.length),
      revenue: money(cents),
      average_deal_value: average(cents, customers.length),
    };
  }
  const ALL_CONTACT_METRICS = ['lead_count', 'customer_count', 'conversion_rate', 'revenue', 'average_deal_value'];

  async function generated(body: object, as: Client = owner) {
    const res = await as.post('/api/v1/analytics/custom', body);
    expect(res.status).toBe(201);
    const done = await waitForReport(as, res.body.id);
    expect(done.status).toBe('ready');
    return { created: res.body, report: done, rows: await download(as, res.body.id) };
  }

  describe('POST /api/v1/analytics/custom', () => {
    it('is 201 generating with a downloadUrl, then ready with a CSV by source whose numbers match the contacts', async () => {
      const res = await owner.post('/api/v1/analytics/custom', {
        name: 'Revenue by source',
        metrics: ALL_CONTACT_METRICS,
        dimensions: ['source'],
        ...range,
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(
        expect.objectContaining({
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          name: 'Revenue by source',
          status: 'generating',
          createdAt: expect.any(String),
        }),
      );
      expect(res.body.downloadUrl).toBe(`/api/v1/analytics/custom/${res.body.id}/download`);

      const done = await waitForReport(owner, res.body.id);
      expect(done).toEqual(
        expect.objectContaining({
          status: 'ready',
          rowCount: 3,
          error: null,
          completedAt: expect.any(String),
          metrics: ALL_CONTACT_METRICS,
          dimensions: ['source'],
          dateFrom: yesterday,
          dateTo: tomorrow,
          filters: [],
        }),
      );

      const file = await owner.get(res.body.downloadUrl);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(file.headers.get('content-disposition')).toBe(`attachment; filename="revenue-by-source-${res.body.createdAt.slice(0, 10)}.csv"`);
      const [header] = parseCsv(file.body);
      expect(header).toEqual(['source', ...ALL_CONTACT_METRICS]);
      // A text cell starting with "-" is neutralised with an apostrophe.
      expect(file.body).toContain("\r\n'-promo,1,0,0.00,0.00,\r\n");

      const rows = records(file.body);
      const sources = ['-promo', 'manual', 'website'];
      expect(rows).toEqual(
        sources.map((s) => ({ source: s === '-promo' ? "'-promo" : s, ...expectedContactMetrics(contacts.filter((c) => c.source === s)) })),
      );
      // Spelled out once, to show what the computed expectations are.
      expect(rows[2]).toEqual({
        source: 'website',
        lead_count: '3',
        customer_count: '2',
        conversion_rate: '66.67',
        revenue: '1200.75',
        average_deal_value: '600.38',
      });

      // A download is an export of the organization's data: the audit log says who took it.
      const entry = await auditEntryFor(owner, 'report.exported', res.body.id);
      expect(entry).toEqual(
        expect.objectContaining({ actorType: 'user', resourceType: 'report', details: { name: 'Revenue by source', bytes: expect.any(Number) } }),
      );
    });

    it('starts the file with a UTF-8 byte order mark (spreadsheets need it for accented names)', async () => {
      const { created } = await generated({ name: 'Totals', metrics: ['lead_count'], ...range });
      const raw = await fetch(`${crm.stack.url}${created.downloadUrl}`, { headers: { authorization: `Bearer ${acme.token}` } });
      const bytes = Buffer.from(await raw.arrayBuffer());
      expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
      expect(bytes.subarray(3).toString()).toBe(`lead_count\r\n${contacts.length}\r\n`);
    });

    it('by assignedUser: id and name columns, names escaped and neutralised, unassigned contacts in their own row', async () => {
      const { rows } = await generated({
        name: 'By owner',
        metrics: ['lead_count', 'revenue', 'conversion_rate'],
        dimensions: ['assignedUser'],
        ...range,
      });
      const names: Record<string, string> = { [lead.id]: 'team_lead person', [trickyId]: `'=Lee, "Boss"` };
      const expected = [lead.id, trickyId].sort().map((id) => {
        const m = expectedContactMetrics(contacts.filter((c) => c.assignee === id));
        return {
          assigned_user_id: id,
          assigned_user_name: names[id],
          lead_count: m.lead_count,
          revenue: m.revenue,
          conversion_rate: m.conversion_rate,
        };
      });
      const none = expectedContactMetrics(contacts.filter((c) => c.assignee === null));
      expected.push({
        assigned_user_id: '',
        assigned_user_name: 'Unassigned',
        lead_count: none.lead_count,
        revenue: none.revenue,
        conversion_rate: none.conversion_rate,
      });
      expect(rows).toEqual(expected);
    });

    it('by status and day, with no dimensions (one totals row), and for a range without contacts', async () => {
      const byStatus = await generated({ name: 'Status by day', metrics: ['lead_count', 'revenue'], dimensions: ['status', 'day'], ...range });
      expect(byStatus.rows).toEqual(
        ['customer', 'lead', 'lost', 'new'].map((st) => {
          const m = expectedContactMetrics(contacts.filter((c) => c.status === st));
          return { status: st, day: createdDay, lead_count: m.lead_count, revenue: m.revenue };
        }),
      );

      const totals = await generated({ name: 'All', metrics: ALL_CONTACT_METRICS, ...range });
      expect(totals.rows).toEqual([expectedContactMetrics(contacts)]);

      const past = await generated({ name: 'Old times', metrics: ALL_CONTACT_METRICS, dateFrom: '2020-01-01', dateTo: '2020-12-31' });
      expect(past.rows).toEqual([{ lead_count: '0', customer_count: '0', conversion_rate: '', revenue: '0.00', average_deal_value: '' }]);
      const pastBySource = await generated({
        name: 'Old by source',
        metrics: ['lead_count'],
        dimensions: ['source'],
        dateFrom: '2020-01-01',
        dateTo: '2020-12-31',
      });
      expect(pastBySource.rows).toEqual([]);
      expect(pastBySource.report.rowCount).toBe(0);
    });

    it('applies filters (customer-list fields and operators, dealValue included)', async () => {
      const filters = [
        { field: 'status', operator: 'in', value: ['customer', 'lead'] },
        { field: 'dealValue', operator: 'gte', value: 300 },
      ];
      const { rows, report } = await generated({ name: 'Big deals', metrics: ALL_CONTACT_METRICS, dimensions: ['source'], ...range, filters });
      expect(report.filters).toEqual(filters);
      const kept = contacts.filter((c) => ['customer', 'lead'].includes(c.status) && c.cents >= 30_000);
      expect(rows).toEqual(['manual', 'website'].map((s) => ({ source: s, ...expectedContactMetrics(kept.filter((c) => c.source === s)) })));
    });

    it('message metrics count the messages of the range by message day, next to the contacts created that day', async () => {
      const { rows } = await generated({
        name: 'Messages',
        metrics: ['lead_count', 'messages_received', 'messages_sent'],
        dimensions: ['day'],
        ...range,
      });
      const byDay: Record<string, Record<string, number>> = {};
      const add = (day: string, key: string) => ((byDay[day] ??= { lead_count: 0, messages_received: 0, messages_sent: 0 })[key] += 1);
      contacts.forEach(() => add(createdDay, 'lead_count'));
      add(yesterday, 'messages_received');
      add(yesterday, 'messages_received');
      add(today, 'messages_sent');
      add(today, 'messages_received');
      expect(rows).toEqual(
        Object.keys(byDay)
          .sort()
          .map((day) => ({ day, ...Object.fromEntries(Object.entries(byDay[day]).map(([k, v]) => [k, String(v)])) })),
      );

      // Filters narrow the contacts whose messages count: Ann is the website contact with messages.
      const website = await generated({
        name: 'Website messages',
        metrics: ['messages_received', 'messages_sent'],
        ...range,
        filters: [{ field: 'source', operator: 'equals', value: 'website' }],
      });
      expect(website.rows).toEqual([{ messages_received: '2', messages_sent: '1' }]);
    });

    it('buckets by week (named by its Monday) and month', async () => {
      const created = new Date(`${createdDay}T00:00:00.000Z`);
      const monday = dayOf(new Date(created.getTime() - ((created.getUTCDay() + 6) % 7) * 86_400_000));
      const week = await generated({ name: 'Weekly', metrics: ['lead_count'], dimensions: ['week'], dateFrom: createdDay, dateTo: createdDay });
      expect(week.rows).toEqual([{ week: monday, lead_count: String(contacts.length) }]);
      const month = await generated({ name: 'Monthly', metrics: ['lead_count'], dimensions: ['month'], dateFrom: createdDay, dateTo: createdDay });
      expect(month.rows).toEqual([{ month: createdDay.slice(0, 7), lead_count: String(contacts.length) }]);
    });

    it('is 400 naming the bad field', async () => {
      const bad = async (patch: object) => {
        const res = await owner.post('/api/v1/analytics/custom', { name: 'Bad', metrics: ['revenue'], ...range, ...patch });
        expect(res.status).toBe(400);
        return res.body.error.details.map((d: { field: string }) => d.field);
      };
      expect(await bad({ metrics: ['revenue', 'profit'] })).toEqual(['metrics[1]']);
      expect(await bad({ metrics: ['revenue', 'revenue'] })).toEqual(['metrics[1]']);
      expect(await bad({ metrics: [] })).toEqual(['metrics']);
      expect(await bad({ metrics: 'revenue' })).toEqual(['metrics']);
      expect(await bad({ dimensions: ['source', 'color'] })).toEqual(['dimensions[1]']);
      expect(await bad({ dimensions: ['day', 'source', 'month'] })).toEqual(['dimensions[2]']);
      expect(await bad({ filters: [{ field: 'salary', operator: 'equals', value: 1 }] })).toEqual(['filters[0].field']);
      expect(
        await bad({
          filters: [
            { field: 'source', operator: 'equals', value: 'x' },
            { field: 'source', operator: 'gte', value: 'x' },
          ],
        }),
      ).toEqual(['filters[1].operator']);
      expect(await bad({ filters: [{ field: 'dealValue', operator: 'gte', value: 'lots' }] })).toEqual(['filters[0].value']);
      expect(await bad({ filters: { field: 'source' } })).toEqual(['filters']);
      expect(await bad({ name: '' })).toEqual(['name']);
      expect(await bad({ dateFrom: undefined })).toEqual(['dateFrom']);
      expect(await bad({ dateFrom: 'yesterday' })).toEqual(['dateFrom']);
      expect(await bad({ dateFrom: '2024-02-30' })).toEqual(['dateFrom']);
      expect(await bad({ dateFrom: tomorrow, dateTo: yesterday })).toEqual(['dateTo']);
      expect(await bad({ dateFrom: '2020-01-01', dateTo: '2023-01-01' })).toEqual(['dateTo']);
      expect((await owner.get('/api/v1/analytics/custom')).body.data.every((r: { name: string }) => r.name !== 'Bad')).toBe(true);
    });
  });

  describe('reading reports', () => {
    it("lists the organization's reports newest first, paginated", async () => {
      const all = await lead.as.get('/api/v1/analytics/custom?limit=100');
      expect(all.status).toBe(200);
      const total = all.body.pagination.total;
      expect(total).toBeGreaterThan(3);
      expect(all.body.data).toHaveLength(total);
      const times = all.body.data.map((r: { createdAt: string }) => r.createdAt);
      expect([...times].sort().reverse()).toEqual(times);
      const page2 = await lead.as.get('/api/v1/analytics/custom?limit=2&page=2');
      expect(page2.body.pagination).toEqual({ total, page: 2, limit: 2, pages: Math.ceil(total / 2) });
      expect(page2.body.data.map((r: { id: string }) => r.id)).toEqual(all.body.data.slice(2, 4).map((r: { id: string }) => r.id));
      expect(all.body.data[0]).toEqual(expect.objectContaining({ downloadUrl: `/api/v1/analytics/custom/${all.body.data[0].id}/download` }));
      expect((await lead.as.get('/api/v1/analytics/custom?limit=abc')).status).toBe(400);
      // Another organization sees none of them.
      expect((await globex.owner.get('/api/v1/analytics/custom')).body.pagination.total).toBe(0);
    });

    it('team leads create and download reports too; agents get 403', async () => {
      const { rows } = await generated({ name: 'Lead made', metrics: ['customer_count'], ...range }, lead.as);
      expect(rows).toEqual([{ customer_count: String(contacts.filter((c) => c.status === 'customer').length) }]);
      const some = (await owner.get('/api/v1/analytics/custom')).body.data[0].id;
      for (const res of [
        await agent.as.post('/api/v1/analytics/custom', { name: 'Nope', metrics: ['revenue'], ...range }),
        await agent.as.get('/api/v1/analytics/custom'),
        await agent.as.get(`/api/v1/analytics/custom/${some}`),
        await agent.as.get(`/api/v1/analytics/custom/${some}/download`),
      ]) {
        expect(res.status).toBe(403);
      }
    });

    it("is 401 without a token and 404 for another organization's or a malformed id", async () => {
      const id = (await owner.get('/api/v1/analytics/custom')).body.data[0].id;
      for (const res of [
        await crm.api.post('/api/v1/analytics/custom', { name: 'Anon', metrics: ['revenue'], ...range }),
        await crm.api.get('/api/v1/analytics/custom'),
        await crm.api.get(`/api/v1/analytics/custom/${id}`),
        await crm.api.get(`/api/v1/analytics/custom/${id}/download`),
      ]) {
        expect(res.status).toBe(401);
      }
      expect((await globex.owner.get(`/api/v1/analytics/custom/${id}`)).status).toBe(404);
      expect((await globex.owner.get(`/api/v1/analytics/custom/${id}/download`)).status).toBe(404);
      expect((await owner.get('/api/v1/analytics/custom/not-a-uuid')).status).toBe(404);
      expect((await owner.get('/api/v1/analytics/custom/not-a-uuid/download')).status).toBe(404);
    });
  });
});

describe('custom reports: no worker, restart, failures', () => {
  let crm: CrmStack;
  let acme: Org;
  let owner: Client;
  const today = dayOf(new Date());
  const range = { dateFrom: today, dateTo: dayOf(new Date(Date.now() + 86_400_000)) };

  beforeAll(async () => {
    // This instance generates nothing: reports stay generating until an instance with a worker runs.
    crm = await startCrmStack({ serviceEnv: { crm: { REPORTS_WORKER: 'false' } } });
    acme = await crm.newOrg('Acme');
    owner = acme.owner;
    for (const [name, source, status, dealValue, assigned] of [
      ['One', 'website', 'customer', 10.1, true],
      ['Two', 'website', 'new', 0, false],
      ['Three', 'manual', 'customer', 20.2, false],
      ['Four', 'referral', 'lost', 0, false],
    ] as const) {
      const assignedUserId = assigned ? acme.user.id : undefined;
      expect((await owner.post('/api/v1/contacts', { name, source, status, dealValue, assignedUserId })).status).toBe(201);
    }
  });
  afterAll(() => crm?.stop());

  it('a report left generating is generated after a restart; over the row cap or without user names it fails with the reason', async () => {
    const create = async (body: object) => {
      const res = await owner.post('/api/v1/analytics/custom', { ...range, ...body });
      expect(res.status).toBe(201);
      expect(res.body.status).toBe('generating');
      return res.body.id as string;
    };
    const byStatus = await create({
      name: 'Won and lost',
      metrics: ['lead_count', 'revenue'],
      dimensions: ['status'],
      filters: [{ field: 'status', operator: 'in', value: ['customer', 'lost'] }],
    });
    const bySource = await create({ name: 'Too many rows', metrics: ['lead_count'], dimensions: ['source'] });
    const byUser = await create({ name: 'Needs names', metrics: ['lead_count'], dimensions: ['assignedUser'] });

    // No worker: still generating, and the download says so.
    expect((await owner.get(`/api/v1/analytics/custom/${byStatus}`)).body.status).toBe('generating');
    const early = await owner.get(`/api/v1/analytics/custom/${byStatus}/download`);
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('report_not_ready');

    // Restart with the worker on, at most 2 rows per report, and identity out of reach for crm.
    const nowhere = `127.0.0.1:1`;
    await crm.stack.restart('crm', { REPORTS_WORKER: 'true', REPORT_MAX_ROWS: '2', IDENTITY_ADDR: nowhere, REPORT_POLL_MS: '200' });

    const ready = await waitForReport(owner, byStatus);
    expect(ready).toEqual(expect.objectContaining({ status: 'ready', rowCount: 2, error: null }));
    expect(await download(owner, byStatus)).toEqual([
      { status: 'customer', lead_count: '2', revenue: '30.30' },
      { status: 'lost', lead_count: '1', revenue: '0.00' },
    ]);

    const tooMany = await waitForReport(owner, bySource);
    expect(tooMany).toEqual(expect.objectContaining({ status: 'failed', rowCount: null }));
    expect(tooMany.error).toMatch(/more than 2 rows/);
    const failedDownload = await owner.get(`/api/v1/analytics/custom/${bySource}/download`);
    expect(failedDownload.status).toBe(422);
    expect(failedDownload.body.error.code).toBe('report_failed');
    expect(failedDownload.body.error.message).toContain('more than 2 rows');

    const noNames = await waitForReport(owner, byUser);
    expect(noNames.status).toBe('failed');
    expect(noNames.error).toMatch(/User names could not be read/);

    // A report created now is picked up by the running worker.
    const fresh = await create({ name: 'Fresh', metrics: ['customer_count', 'average_deal_value'] });
    expect(await waitForReport(owner, fresh)).toEqual(expect.objectContaining({ status: 'ready', rowCount: 1 }));
    expect(await download(owner, fresh)).toEqual([{ customer_count: '2', average_deal_value: '15.15' }]);
  });
});
