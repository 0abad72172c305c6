import { createServiceClient, loadProto, serviceDefinition } from '@crm/grpc-kit';
import { eventually, testAuth } from '@crm/testing';
import { auditEntries } from '../support/audit';
import { Client, email } from '../support/http';
import { CrmStack, Org, startCrmStack } from './crm-support';

// CSV import (POST /api/v1/contacts/import, multipart, streamed through the gateway to crm in batches) and export
// (GET /api/v1/contacts/export, streamed out): line numbers in errors, matching by phone then email, dry runs,
// formula neutralisation, roles, audit entries, and an export that imports into another org as the same contacts.
describe('contacts CSV import and export', () => {
  let crm: CrmStack;
  let acme: Org;
  let globex: Org;
  let owner: Client;
  let leadToken: string;
  let agentToken: string;
  let agentId: string;

  const FIELDS = [
    { key: 'tier', label: 'Tier', type: 'select', options: ['Gold', 'Silver'] },
    { key: 'score', label: 'Score', type: 'number' },
    { key: 'vip', label: 'VIP', type: 'boolean' },
    { key: 'since', label: 'Customer since', type: 'date' },
  ];

  /** A user of the org with `role`, signed in: its token (uploads and downloads are raw fetches). */
  async function userToken(org: Org, role: string): Promise<{ id: string; token: string }> {
    const e = email(role);
    const made = await org.owner.post('/api/v1/users', { email: e, fullName: `${role} person`, role, password: 'correct horse battery' });
    const login = await crm.api.post('/api/v1/auth/login', { email: e, password: 'correct horse battery' });
    return { id: made.body.id, token: login.body.token };
  }

  /** POST the CSV as multipart/form-data (field `file` unless told otherwise). */
  async function upload(token: string | undefined, csv: string, query = '', field = 'file') {
    const fd = new FormData();
    fd.append(field, new Blob([csv], { type: 'text/csv' }), 'contacts.csv');
    const res = await fetch(`${crm.stack.url}/api/v1/contacts/import${query}`, {
      method: 'POST',
      headers: token ? { authorization: `Bearer ${token}` } : {},
      body: fd,
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  /** GET the export: its bytes (a BOM is part of the file) and its lines. */
  async function download(token: string | undefined, query = '') {
    const res = await fetch(`${crm.stack.url}/api/v1/contacts/export${query}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    const bytes = Buffer.from(await res.arrayBuffer());
    const text = bytes.toString('utf8');
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      bytes,
      text,
      lines: text
        .replace(/^\uFEFF/, '')
        .split('\r\n')
        .filter(Boolean),
    };
  }

  const contactsOf = async (as: Client, q = '') => (await as.get(`/api/v1/contacts?limit=100${q}`)).body.data as any[];
  const byName = async (as: Client, name: string) => (await contactsOf(as)).find((c) => c.name === name);

  beforeAll(async () => {
    crm = await startCrmStack();
    acme = await crm.newOrg('Acme');
    globex = await crm.newOrg('Globex');
    owner = acme.owner;
    for (const f of FIELDS) expect((await owner.post('/api/v1/contact-fields', f)).status).toBe(201);
    leadToken = (await userToken(acme, 'team_lead')).token;
    ({ id: agentId, token: agentToken } = await userToken(acme, 'agent'));
  }, 60_000);
  afterAll(() => crm?.stop());

  it('imports quoted cells, escaped quotes, CRLF, line breaks inside cells and a BOM; bad rows are listed by line and skipped', async () => {
    const csv = [
      '\uFEFFName,phone,email,tags,status,tier,score,vip',
      '"Tran, An",0912 000 001,an@example.test,vip;hanoi,lead,Gold,12.5,true',
      '"Binh ""B"" Le",0912 000 002,,,customer,silver,,false',
      '"Chi\nMultiline",,chi@example.test,a,,,-3,',
      'Bad Phone,abc,,,,,,',
      'Bad Many,0912 000 003,not-an-email,,unknown,Purple,ten,maybe',
      ',,,,,,,',
      'Too Many,0912 000 004,,,,,,,extra',
      'Dup An,0912 000 001,,,,,,',
    ].join('\r\n');
    const res = await upload(leadToken, csv);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      created: 3,
      updated: 1,
      failed: 4,
      // Line 4's cell holds a line break, so the rows after it start one line later; listed in line order.
      errors: [
        { line: 6, field: 'phone', message: expect.any(String) },
        { line: 7, field: 'email', message: 'must be a valid email address' },
        { line: 7, field: 'status', message: 'must be one of new, lead, customer, lost' },
        { line: 7, field: 'tier', message: 'must be one of Gold, Silver' },
        { line: 7, field: 'score', message: 'must be a finite number' },
        { line: 7, field: 'vip', message: 'must be true or false' },
        { line: 8, field: 'name', message: 'is required when there is no phone or email' },
        { line: 9, field: 'file', message: 'the row has 9 cells; the header has 8' },
      ],
    });
    // Row 10 matched row 2's phone: it updated that contact's name; its empty cells erased nothing.
    const an = await byName(owner, 'Dup An');
    expect(an).toEqual(
      expect.objectContaining({ phone: '+84912000001', email: 'an@example.test', tags: ['vip', 'hanoi'], status: 'lead', source: 'import' }),
    );
    expect(an.customFields).toEqual({ vip: true, tier: 'Gold', score: 12.5 });
    expect((await byName(owner, 'Binh "B" Le')).customFields).toEqual({ vip: false, tier: 'Silver' });
    const chi = await byName(owner, 'Chi\nMultiline');
    expect(chi).toEqual(expect.objectContaining({ email: 'chi@example.test', phone: null, status: 'new', tags: ['a'], customFields: { score: -3 } }));
    expect(await byName(owner, 'Bad Phone')).toBeUndefined();
    expect(await byName(owner, 'Too Many')).toBeUndefined();
  });

  it('a second import updates instead of duplicating: by phone, then by email', async () => {
    const before = (await contactsOf(owner)).length;
    const csv = 'phone,email,name,score\n0912000002,,Binh Updated,7\n,CHI@example.test,Chi Found,\n0912 000 005,new@example.test,New One,1\n';
    const res = await upload(leadToken, csv);
    expect(res.body).toEqual({ created: 1, updated: 2, failed: 0, errors: [] });
    expect((await contactsOf(owner)).length).toBe(before + 1);
    expect((await byName(owner, 'Binh Updated')).customFields).toEqual({ vip: false, tier: 'Silver', score: 7 });
    expect((await byName(owner, 'Chi Found')).email).toBe('chi@example.test');
    // The same file again: everything matches, nothing is created.
    expect((await upload(leadToken, csv)).body).toEqual({ created: 0, updated: 3, failed: 0, errors: [] });
    expect((await contactsOf(owner)).length).toBe(before + 1);
  });

  it('rows travel to crm in batches of 500: a row of the third batch updates a contact the first one created', async () => {
    const rows = Array.from({ length: 1200 }, (_, i) => `Batch ${i},0913${String(i).padStart(6, '0')},,batch,,,${i},`);
    rows.push('Batch Again,0913000002,,,,,,true');
    const res = await upload(leadToken, ['name,phone,email,tags,status,tier,score,vip', ...rows].join('\n'));
    expect(res.body).toEqual({ created: 1200, updated: 1, failed: 0, errors: [] });
    expect((await owner.get('/api/v1/contacts?tag=batch&limit=1')).body.pagination.total).toBe(1200);
    const again = (await owner.get('/api/v1/contacts?search=Batch Again')).body.data;
    expect(again.map((c: any) => [c.phone, c.customFields])).toEqual([['+84913000002', { vip: true, score: 2 }]]);
    // Out of the way of the tests below, which count and export the org's contacts.
    for (let page = await contactsOf(owner, '&tag=batch'); page.length > 0; page = await contactsOf(owner, '&tag=batch')) {
      await owner.post('/api/v1/contacts/bulk', { ids: page.map((c) => c.id), action: 'delete' });
    }
  });

  it('dryRun=true reports the same counts and errors and writes nothing', async () => {
    const before = await contactsOf(owner);
    const csv = 'name,phone,score\nDry New,0912 000 006,1\nDry Binh,0912000002,99\nDry Bad,0912 000 007,x\n';
    const res = await upload(leadToken, csv, '?dryRun=true');
    expect(res.body).toEqual({ created: 1, updated: 1, failed: 1, errors: [{ line: 4, field: 'score', message: 'must be a finite number' }] });
    expect(await contactsOf(owner)).toEqual(before);
    expect((await upload(leadToken, csv, '?dryRun=maybe')).body.error.details[0].field).toBe('dryRun');
  });

  it('a header naming an unknown column, an empty file, a missing file part or a non-multipart body is a 400 naming file', async () => {
    const unknown = await upload(leadToken, 'name,colour\nX,red\n');
    expect([unknown.status, unknown.body.error.details[0]]).toEqual([400, { field: 'file', message: expect.stringContaining('"colour"') }]);
    expect((await upload(leadToken, 'tags,score\nx,1\n')).body.error.details[0]).toEqual({
      field: 'file',
      message: 'the header row must have a name, phone or email column',
    });
    expect((await upload(leadToken, 'name,name\nX,Y\n')).status).toBe(400);
    expect((await upload(leadToken, '')).body.error.details[0].field).toBe('file');
    expect((await upload(leadToken, 'name\nX\n', '', 'upload')).body.error.details[0]).toEqual({
      field: 'file',
      message: 'is required (multipart/form-data, field named file)',
    });
    const json = await fetch(`${crm.stack.url}/api/v1/contacts/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${leadToken}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect([json.status, ((await json.json()) as any).error.details[0].field]).toEqual([400, 'file']);
    expect(await byName(owner, 'X')).toBeUndefined();
  });

  it('a quote left open stops the reading there: the rows before it are imported, the problem is listed with its line', async () => {
    const res = await upload(leadToken, 'name,phone\nBefore Quote,0912 000 008\n"Open quote,0912 000 009\nAfter,0912 000 010\n');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      created: 1,
      updated: 0,
      failed: 1,
      errors: [{ line: 3, field: 'file', message: 'a quoted cell is not closed before the end of the file' }],
    });
    expect(await byName(owner, 'Before Quote')).toBeDefined();
  });

  it('import needs a token (401) and a team lead, admin or owner (403 for an agent); each import is audited', async () => {
    expect((await upload(undefined, 'name\nNobody\n')).status).toBe(401);
    const agent = await upload(agentToken, 'name\nAgent Import\n');
    expect([agent.status, agent.body.error.code]).toEqual([403, 'forbidden']);
    expect((await upload(acme.token, 'name\nOwner Import\n')).body.created).toBe(1);
    const entry = await eventually(async () =>
      (await auditEntries(owner, 'contacts.imported')).find((e) => e.details.created === 1 && e.details.updated === 0 && e.details.failed === 0),
    );
    expect(entry).toEqual(expect.objectContaining({ actorId: acme.user.id, resourceType: 'contact' }));
  });

  it('export streams every matching contact as CSV with custom fields as columns; cells that could be formulas are neutralised', async () => {
    await owner.post('/api/v1/contacts', {
      name: '=SUM(A1:A9)',
      phone: '+84 912 000 011',
      tags: ['@home', '-x'],
      customFields: { score: -1, since: '2020-05-01' },
    });
    const res = await download(acme.token, '?search=SUM');
    expect(res.status).toBe(200);
    expect(res.type).toBe('text/csv; charset=utf-8');
    expect(res.bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    // Custom field columns come in the fields' order (position, then key).
    expect(res.lines).toEqual(['name,phone,email,tags,status,score,since,tier,vip', "'=SUM(A1:A9),'+84912000011,,'@home;-x,new,'-1,2020-05-01,,"]);

    const all = await download(acme.token);
    const total = (await owner.get('/api/v1/contacts?limit=1')).body.pagination.total;
    expect(all.lines.length).toBe(total + 1);
    expect(all.lines).toContain("Binh Updated,'+84912000002,,,customer,7,,Silver,false");
    expect(all.lines).toContain("Chi Found,,chi@example.test,a,new,'-3,,,");
  });

  it('export takes the list filters, cf.<key> included (400 naming a bad one, before any CSV)', async () => {
    const gold = await download(acme.token, '?cf.tier=gold');
    expect(gold.lines.slice(1)).toEqual(["Dup An,'+84912000001,an@example.test,vip;hanoi,lead,12.5,,Gold,true"]);
    expect((await download(acme.token, '?status=customer&cf.vip=false')).lines.slice(1).map((l) => l.split(',')[0])).toEqual(['Binh Updated']);
    const bad = await download(acme.token, '?cf.score=abc');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error.details[0].field).toBe('cf.score');
    expect((await download(undefined)).status).toBe(401);
    await eventually(async () =>
      (await auditEntries(owner, 'contacts.exported')).find((e) => e.details.filters?.customFieldFilters?.tier === 'gold'),
    );
  });

  it('an export imported into another organization gives the same contacts', async () => {
    for (const f of FIELDS) await globex.owner.post('/api/v1/contact-fields', f);
    const exported = await download(acme.token);
    const res = await upload(globex.token, exported.text);
    expect(res.body).toEqual({ created: exported.lines.length - 1, updated: 0, failed: 0, errors: [] });
    const again = await download(globex.token);
    expect(again.lines[0]).toBe(exported.lines[0]);
    expect([...again.lines.slice(1)].sort()).toEqual([...exported.lines.slice(1)].sort());
    // Nothing crossed the other way.
    expect((await contactsOf(owner)).length).toBe(exported.lines.length - 1);
  });

  it('export needs contacts:export: an agent is refused (403) and nothing is written; a team lead exports', async () => {
    const refused = await download(agentToken);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text).error).toEqual({ code: 'forbidden', message: 'This action needs permission contacts:export' });
    const lead = await download(leadToken);
    expect(lead.status).toBe(200);
    expect(lead.lines.length).toBeGreaterThan(1);
  });

  it("crm refuses an agent's export itself, whatever the gateway checked (ExportContacts and its audit record)", async () => {
    const rpc = createServiceClient(
      serviceDefinition(loadProto('crm/v1/contact-fields.proto'), 'crm.v1.ContactTransferService'),
      crm.stack.addr('crm'),
      testAuth('gateway'),
    );
    try {
      const ctx = { orgId: acme.orgId, userId: agentId, role: 'agent' };
      await expect(rpc.ExportContacts({ filters: {}, afterId: '', limit: 10 }, ctx)).rejects.toMatchObject({ code: 7 });
      await expect(rpc.RecordContactTransfer({ kind: 'export', exported: 1, filtersJson: '{}' }, ctx)).rejects.toMatchObject({ code: 7 });
    } finally {
      rpc.close();
    }
  });
});
