import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { eventually } from '@crm/testing';
import { client, type Res } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { orgWithKey } from '../messaging/support';

/**
 * Contract: every public operation is called live (the whole stack, the sandbox chat network) and each answer,
 * success and error, is validated against the schema /api/public/openapi.json documents for its status.
 * A documented field that is missing, an undocumented top-level field, or a status the document does not
 * list fails the test.
 */
describe('the public API answers what /api/public/openapi.json documents', () => {
  let stack: Stack;
  let doc: any;
  /** /openapi.json: the internal operations too. */
  let whole: any;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const exercised = new Set<string>();

  /** Validate `res` against the documented response of `method path` (OpenAPI path template) for its status. */
  function conforms(method: string, path: string, res: Res) {
    const op = doc.paths[path]?.[method.toLowerCase()];
    expect([method, path, Boolean(op)]).toEqual([method, path, true]);
    const documented = op.responses[String(res.status)];
    expect([method, path, res.status, Boolean(documented)]).toEqual([method, path, res.status, true]);
    exercised.add(`${method} ${path}`);
    let schema = documented.content?.['application/json']?.schema;
    if (!schema) return;
    if (schema.$ref) schema = doc.components.schemas[schema.$ref.split('/').pop()];
    const validate = ajv.compile(schema);
    const ok = validate(res.body);
    expect([method, path, res.status, ok ? [] : validate.errors]).toEqual([method, path, res.status, []]);
  }

  // Uploaded attachments land here, never in the checkout.
  const attachmentsDir = mkdtempSync(path.join(tmpdir(), 'contract-files-'));

  /**
   * Validate an internal answer against /openapi.json: its status is documented for the operation, a JSON
   * body matches that status's schema, and any other body has the documented media type.
   */
  function check(method: string, path: string, res: Res) {
    const op = whole.paths[path]?.[method.toLowerCase()];
    expect([method, path, Boolean(op)]).toEqual([method, path, true]);
    const documented = op.responses[String(res.status)];
    expect([method, path, res.status, Boolean(documented)]).toEqual([method, path, res.status, true]);
    const media = Object.keys(documented.content ?? {});
    if (media.length === 0) return;
    if (!media.includes('application/json')) {
      expect([method, path, res.headers.get('content-type')?.split(';')[0]]).toEqual([method, path, media[0]]);
      return;
    }
    let schema = documented.content['application/json'].schema;
    if (schema.$ref) schema = whole.components.schemas.Error;
    const validate = ajv.compile(schema);
    expect([method, path, res.status, validate(res.body) ? [] : validate.errors]).toEqual([method, path, res.status, []]);
  }

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'chatnet-connector', 'messaging', 'automation', 'webhooks', 'ai'],
      // The test endpoint is on this machine (nothing listens on port 9: the test send fails fast).
      serviceEnv: { webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1' }, messaging: { ATTACHMENTS_DIR: attachmentsDir } },
    });
    doc = (await client(stack.url).get('/api/public/openapi.json')).body;
    whole = (await client(stack.url).get('/openapi.json')).body;
    a = await orgWithKey(stack.url, 'Contract Org');
  }, 90_000);
  afterAll(async () => {
    await stack?.stop();
    rmSync(attachmentsDir, { recursive: true, force: true });
  });

  it('contacts: list, create, read, update, and their errors', async () => {
    const created = await a.pub.post('/api/public/contacts', {
      fullName: 'Lan Pham',
      phone: '+84901234567',
      email: 'lan@example.test',
      tags: ['vip'],
    });
    expect(created.status).toBe(201);
    conforms('POST', '/api/public/contacts', created);
    const id = created.body.id;
    conforms('POST', '/api/public/contacts', await a.pub.post('/api/public/contacts', { email: 'not an email' }));

    const list = await a.pub.get('/api/public/contacts?search=Lan&limit=5');
    expect(list.body.contacts).toHaveLength(1);
    conforms('GET', '/api/public/contacts', list);
    conforms('GET', '/api/public/contacts', await a.pub.get('/api/public/contacts?status=bogus'));
    conforms('GET', '/api/public/contacts', await client(stack.url).get('/api/public/contacts'));

    const appt = await a.pub.post('/api/public/appointments', {
      contactId: id,
      appointmentDate: '2030-05-01',
      appointmentTime: '09:30',
      type: 'call',
      notes: 'first call',
    });
    expect(appt.status).toBe(201);
    conforms('POST', '/api/public/appointments', appt);
    conforms('POST', '/api/public/appointments', await a.pub.post('/api/public/appointments', { contactId: id, appointmentDate: '2030-02-30' }));
    conforms(
      'POST',
      '/api/public/appointments',
      await a.pub.post('/api/public/appointments', { contactId: '00000000-0000-4000-8000-000000000000', appointmentDate: '2030-05-01' }),
    );

    const detail = await a.pub.get(`/api/public/contacts/${id}`);
    expect(detail.body.appointments).toHaveLength(1);
    conforms('GET', '/api/public/contacts/{id}', detail);
    conforms('GET', '/api/public/contacts/{id}', await a.pub.get('/api/public/contacts/00000000-0000-4000-8000-000000000000'));

    const updated = await a.pub.put(`/api/public/contacts/${id}`, { status: 'lead' });
    expect(updated.status).toBe(200);
    conforms('PUT', '/api/public/contacts/{id}', updated);
    conforms('PUT', '/api/public/contacts/{id}', await a.pub.put(`/api/public/contacts/${id}`, { status: 'bogus' }));
    conforms('PUT', '/api/public/contacts/{id}', await a.pub.put('/api/public/contacts/00000000-0000-4000-8000-000000000000', { status: 'lead' }));

    const appts = await a.pub.get('/api/public/appointments?from=2030-05-01&to=2030-05-01');
    expect(appts.body.appointments).toHaveLength(1);
    conforms('GET', '/api/public/appointments', appts);
    conforms('GET', '/api/public/appointments', await a.pub.get('/api/public/appointments?from=yesterday'));
  });

  it('conversations, messages and sending through a connected sandbox account', async () => {
    const account = await a.owner.post('/api/v1/chatnet-accounts', { displayName: 'Contract line' });
    expect(account.status).toBe(201);
    const accountId = account.body.id;
    expect((await a.owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    expect((await a.owner.post(`/sandbox/accounts/${accountId}/scan`, {})).body.status).toBe('connected');
    expect(
      (await a.owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: 'uid-contract', fromName: 'Minh', content: 'Hello?' })).status,
    ).toBe(200);

    const convs = await eventually(async () => {
      const r = await a.pub.get('/api/public/conversations?limit=10');
      return r.body.conversations?.length ? r : undefined;
    });
    conforms('GET', '/api/public/conversations', convs);
    conforms('GET', '/api/public/conversations', await a.pub.get('/api/public/conversations?limit=ten'));
    const convId = convs.body.conversations[0].id;

    const msgs = await a.pub.get(`/api/public/conversations/${convId}/messages`);
    expect(msgs.body.messages.length).toBeGreaterThan(0);
    conforms('GET', '/api/public/conversations/{id}/messages', msgs);
    conforms(
      'GET',
      '/api/public/conversations/{id}/messages',
      await a.pub.get('/api/public/conversations/00000000-0000-4000-8000-000000000000/messages'),
    );

    const sent = await a.pub.post(
      '/api/public/messages/send',
      { chatnetAccountId: accountId, threadId: 'uid-contract', content: 'Yes, we are here' },
      { 'idempotency-key': 'contract-1' },
    );
    expect(sent.status).toBe(200);
    conforms('POST', '/api/public/messages/send', sent);
    // The message a send answers with is read back, and another id is 404.
    conforms('GET', '/api/public/messages/{id}', await a.pub.get(`/api/public/messages/${sent.body.messageId}`));
    conforms('GET', '/api/public/messages/{id}', await a.pub.get('/api/public/messages/00000000-0000-4000-8000-000000000000'));
    conforms(
      'POST',
      '/api/public/messages/send',
      await a.pub.post('/api/public/messages/send', { chatnetAccountId: accountId, threadId: 'uid-contract' }),
    );
    conforms(
      'POST',
      '/api/public/messages/send',
      await a.pub.post('/api/public/messages/send', { chatnetAccountId: '00000000-0000-4000-8000-000000000000', threadId: 'x', content: 'hi' }),
    );

    // Writing first to someone who never wrote (issue #26): new (201), found (200), and the errors.
    expect(
      (await a.owner.post('/sandbox/network/phones', { phones: [{ phone: '+84912340001', chatnetUid: 'uid-lead', displayName: 'Lead' }] })).status,
    ).toBe(200);
    const started = await a.pub.post('/api/public/conversations', {
      chatnetAccountId: accountId,
      phone: '0912340001',
      content: 'Hello from the shop',
    });
    expect(started.status).toBe(201);
    conforms('POST', '/api/public/conversations', started);
    conforms(
      'POST',
      '/api/public/conversations',
      await a.pub.post('/api/public/conversations', { chatnetAccountId: accountId, chatnetUid: 'uid-lead' }),
    );
    conforms('POST', '/api/public/conversations', await a.pub.post('/api/public/conversations', { chatnetAccountId: accountId }));
    conforms(
      'POST',
      '/api/public/conversations',
      await a.pub.post('/api/public/conversations', { chatnetAccountId: '00000000-0000-4000-8000-000000000000', phone: '0912340001' }),
    );
    conforms(
      'POST',
      '/api/public/conversations',
      await a.pub.post('/api/public/conversations', { chatnetAccountId: accountId, phone: '0900000000' }),
    );
  });

  it('whoami, and the documents themselves', async () => {
    const who = await a.pub.get('/api/public/whoami');
    expect(who.body.organizationId).toBe(a.orgId);
    conforms('GET', '/api/public/whoami', who);
    conforms('GET', '/api/public/whoami', await client(stack.url).withKey('not-a-key').get('/api/public/whoami'));
    conforms('GET', '/api/public/openapi.json', await client(stack.url).get('/api/public/openapi.json'));
  });

  it('the event feed: a page, an empty held page, and its 400, 401 and 410', async () => {
    // The contacts created above are in the feed once the webhooks service has consumed their events.
    const page = await eventually(async () => {
      const res = await a.pub.get('/api/public/events?limit=3');
      return res.body.events?.length > 0 ? res : undefined;
    });
    conforms('GET', '/api/public/events', page);
    let end = page;
    while (end.body.events.length > 0) end = await a.pub.get(`/api/public/events?after=${end.body.nextCursor}`);
    conforms('GET', '/api/public/events', await a.pub.get(`/api/public/events?wait=1&after=${end.body.nextCursor}`));
    conforms('GET', '/api/public/events', await a.pub.get('/api/public/events?types=nope.never'));
    conforms('GET', '/api/public/events', await client(stack.url).get('/api/public/events'));
    // A cursor of this feed dated 1970: older than any retention.
    const ancient = Buffer.from('1:0:0').toString('base64url');
    const gone = await a.pub.get(`/api/public/events?after=${ancient}`);
    expect(gone.status).toBe(410);
    conforms('GET', '/api/public/events', gone);
    check('GET', '/api/v1/events', await a.owner.get('/api/v1/events?limit=2'));
    check('GET', '/api/v1/events', await a.owner.get(`/api/v1/events?after=${ancient}`));
  });

  it('internal answers of documented areas match /openapi.json too (spot checks of proto-derived and mapped shapes)', async () => {
    const contact = (await a.owner.get('/api/v1/contacts')).body.data[0];
    check('GET', '/api/v1/contacts', await a.owner.get('/api/v1/contacts'));
    check('GET', '/api/v1/contacts/{id}', await a.owner.get(`/api/v1/contacts/${contact.id}`));
    check('POST', '/api/v1/contacts/{id}/notes', await a.owner.post(`/api/v1/contacts/${contact.id}/notes`, { content: 'called back' }));
    check('GET', '/api/v1/appointments', await a.owner.get('/api/v1/appointments'));
    check('POST', '/api/v1/contact-statuses', await a.owner.post('/api/v1/contact-statuses', { name: 'Warm', color: '#22c55e' }));
    check('GET', '/api/v1/profile', await a.owner.get('/api/v1/profile'));
    check('GET', '/api/v1/users', await a.owner.get('/api/v1/users'));
    check('POST', '/api/v1/teams', await a.owner.post('/api/v1/teams', { name: 'Sales' }));
    check('GET', '/api/v1/teams', await a.owner.get('/api/v1/teams'));
    check('GET', '/api/v1/settings/api-key', await a.owner.get('/api/v1/settings/api-key'));
    check('GET', '/api/v1/audit-log', await a.owner.get('/api/v1/audit-log'));
    check('POST', '/api/v1/customer-lists', await a.owner.post('/api/v1/customer-lists', { name: 'VIPs', criteria: { filters: [] } }));
    check('GET', '/api/v1/customer-lists', await a.owner.get('/api/v1/customer-lists'));
    check('POST', '/api/v1/auth/login', await client(stack.url).post('/api/v1/auth/login', { email: a.email, password: 'correct horse battery' }));
    check('POST', '/api/v1/auth/login', await client(stack.url).post('/api/v1/auth/login', { email: a.email, password: 'wrong' }));
    const accounts = await a.owner.get('/api/v1/chatnet-accounts');
    check('GET', '/api/v1/chatnet-accounts', accounts);
    const accountId = accounts.body[0].id;
    check('GET', '/api/v1/chatnet-accounts/{id}', await a.owner.get(`/api/v1/chatnet-accounts/${accountId}`));
    check('GET', '/api/v1/chatnet-accounts/{id}/status', await a.owner.get(`/api/v1/chatnet-accounts/${accountId}/status`));
    check('GET', '/api/v1/chatnet-accounts/{id}/assignment', await a.owner.get(`/api/v1/chatnet-accounts/${accountId}/assignment`));
    check('PUT', '/api/v1/chatnet-accounts/{id}/proxy', await a.owner.put(`/api/v1/chatnet-accounts/${accountId}/proxy`, { proxyUrl: null }));
    check('GET', '/sandbox/accounts/{id}/sent', await a.owner.get(`/sandbox/accounts/${accountId}/sent`));
    check('POST', '/sandbox/accounts/{id}/seen', await a.owner.post(`/sandbox/accounts/${accountId}/seen`, { threadId: 'uid-contract' }));
    check(
      'POST',
      '/sandbox/accounts/{id}/self',
      await a.owner.post(`/sandbox/accounts/${accountId}/self`, { threadId: 'uid-contract', content: 'typed on the phone' }),
    );
    check('GET', '/sandbox/accounts/{id}/seen-by-agent', await a.owner.get(`/sandbox/accounts/${accountId}/seen-by-agent`));
    check(
      'POST',
      '/sandbox/accounts/{id}/friends',
      await a.owner.post(`/sandbox/accounts/${accountId}/friends`, { friends: [{ chatnetUid: 'uid-f', displayName: 'F' }] }),
    );
  });

  /**
   * `res` is an answer /openapi.json documents for `method path`: its status is listed, a JSON body matches that
   * status's schema (an error the Error schema), and a status documented without a body has none. `expected`:
   * the status the call must have answered (so an error case really exercises that error).
   */
  async function matchesWhole(method: string, path: string, res: Res, expected?: number) {
    if (expected !== undefined) expect([method, path, res.status]).toEqual([method, path, expected]);
    const op = whole.paths[path]?.[method.toLowerCase()];
    expect([method, path, Boolean(op)]).toEqual([method, path, true]);
    const documented = op.responses[String(res.status)];
    expect([method, path, res.status, Boolean(documented)]).toEqual([method, path, res.status, true]);
    let schema = documented.content?.['application/json']?.schema;
    if (!schema) {
      expect([method, path, res.status, documented.content ? 'content' : (res.body ?? '')]).toEqual([
        method,
        path,
        res.status,
        documented.content ? 'content' : '',
      ]);
      return;
    }
    if (schema.$ref) schema = whole.components.schemas[schema.$ref.split('/').pop()];
    const validate = ajv.compile(schema);
    expect([method, path, res.status, validate(res.body) ? [] : validate.errors]).toEqual([method, path, res.status, []]);
  }

  // Its many calls (sends, uploads, searches) took 20-38 s on a loaded machine: past the default 30 s timeout.
  it('chat answers match /openapi.json: inbox, conversation detail, sending, search, notes, folders, presets, settings, attachments', async () => {
    const none = '00000000-0000-4000-8000-000000000000';
    // The conversation Minh started in the test above (not the one we started with the lead: it may be newer, and
    // the lead never wrote, so there is nothing to mark unread in it).
    const list = await a.owner.get('/api/v1/conversations?limit=5');
    expect(list.body.data.length).toBeGreaterThan(0);
    await matchesWhole('GET', '/api/v1/conversations', list);
    await matchesWhole('GET', '/api/v1/conversations', await a.owner.get('/api/v1/conversations?status=bogus'), 400);
    await matchesWhole('GET', '/api/v1/conversations/counts', await a.owner.get('/api/v1/conversations/counts'));
    const convId = list.body.data.find((c: { contactName: string }) => c.contactName === 'Minh')?.id;
    expect(convId).toEqual(expect.any(String));

    const note = await a.owner.post(`/api/v1/conversations/${convId}/notes`, { content: 'Call her back on Monday' });
    expect(note.status).toBe(201);
    await matchesWhole('POST', '/api/v1/conversations/{id}/notes', note);
    await matchesWhole(
      'POST',
      '/api/v1/conversations/{id}/notes',
      await a.owner.post(`/api/v1/conversations/${convId}/notes`, { content: ' ' }),
      400,
    );
    await matchesWhole('GET', '/api/v1/conversations/{id}/notes', await a.owner.get(`/api/v1/conversations/${convId}/notes`));

    // The timeline holds both kinds of item, each validated against its branch.
    const detail = await a.owner.get(`/api/v1/conversations/${convId}`);
    expect(detail.body.timeline.map((t: { kind: string }) => t.kind)).toEqual(expect.arrayContaining(['message', 'note']));
    await matchesWhole('GET', '/api/v1/conversations/{id}', detail);
    await matchesWhole('GET', '/api/v1/conversations/{id}', await a.owner.get(`/api/v1/conversations/${none}`), 404);
    await matchesWhole(
      'DELETE',
      '/api/v1/conversations/{id}/notes/{noteId}',
      await a.owner.del(`/api/v1/conversations/${convId}/notes/${note.body.id}`),
      204,
    );

    const sent = await a.owner.post(
      `/api/v1/conversations/${convId}/messages`,
      { content: 'We open at nine' },
      { 'idempotency-key': 'contract-internal-1' },
    );
    expect(sent.status).toBe(201);
    await matchesWhole('POST', '/api/v1/conversations/{id}/messages', sent);
    await matchesWhole(
      'POST',
      '/api/v1/conversations/{id}/messages',
      await a.owner.post(`/api/v1/conversations/${convId}/messages`, { content: '' }),
      400,
    );
    await matchesWhole(
      'POST',
      '/api/v1/conversations/{id}/messages',
      await a.owner.post(`/api/v1/conversations/${none}/messages`, { content: 'hi' }),
      404,
    );
    // The same key for another message.
    await matchesWhole(
      'POST',
      '/api/v1/conversations/{id}/messages',
      await a.owner.post(`/api/v1/conversations/${convId}/messages`, { content: 'Other' }, { 'idempotency-key': 'contract-internal-1' }),
      422,
    );
    await matchesWhole(
      'PUT',
      '/api/v1/conversations/{id}/messages/{messageId}',
      await a.owner.put(`/api/v1/conversations/${convId}/messages/${sent.body.id}`, { isReplied: true }),
    );

    const hits = await eventually(async () => {
      const r = await a.owner.get('/api/v1/messages/search?q=hello');
      return r.body.data?.length ? r : undefined;
    });
    await matchesWhole('GET', '/api/v1/messages/search', hits);
    await matchesWhole('GET', '/api/v1/messages/search', await a.owner.get('/api/v1/messages/search?q=a'), 400);

    const assigned = await a.owner.put(`/api/v1/conversations/${convId}/assignee`, { userId: a.user.id });
    expect(assigned.body.assigneeId).toBe(a.user.id);
    await matchesWhole('PUT', '/api/v1/conversations/{id}/assignee', assigned);
    await matchesWhole('PUT', '/api/v1/conversations/{id}/assignee', await a.owner.put(`/api/v1/conversations/${convId}/assignee`, {}), 400);
    const snoozed = await a.owner.put(`/api/v1/conversations/${convId}/status`, {
      status: 'snoozed',
      snoozedUntil: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(snoozed.body.snoozedUntil).toEqual(expect.any(String));
    await matchesWhole('PUT', '/api/v1/conversations/{id}/status', snoozed);
    for (const move of ['reopen', 'unread', 'read', 'close', 'archive']) {
      const r = await a.owner.post(`/api/v1/conversations/${convId}/${move}`);
      expect([move, r.status]).toEqual([move, 200]);
      await matchesWhole('POST', `/api/v1/conversations/{id}/${move}`, r);
    }
    await matchesWhole('POST', '/api/v1/conversations/{id}/archive', await a.owner.post(`/api/v1/conversations/${none}/archive`), 404);
    const bulk = await a.owner.post('/api/v1/conversations/bulk', { ids: [convId, none], action: 'read' });
    expect(bulk.body.failed).toEqual([{ id: none, code: 'not_found' }]);
    await matchesWhole('POST', '/api/v1/conversations/bulk', bulk);
    await matchesWhole(
      'POST',
      '/api/v1/conversations/bulk',
      await a.owner.post('/api/v1/conversations/bulk', { ids: [convId], action: 'explode' }),
      400,
    );

    await matchesWhole('GET', '/api/v1/settings/inbox', await a.owner.get('/api/v1/settings/inbox'));
    await matchesWhole('PUT', '/api/v1/settings/inbox', await a.owner.put('/api/v1/settings/inbox', { agentVisibility: 'all' }));
    await matchesWhole('PUT', '/api/v1/settings/inbox', await a.owner.put('/api/v1/settings/inbox', { agentVisibility: 'some' }), 400);

    const folder = await a.owner.post('/api/v1/chat/folders', { name: 'Hot leads', color: '#EF4444' });
    expect(folder.status).toBe(201);
    await matchesWhole('POST', '/api/v1/chat/folders', folder);
    await matchesWhole('POST', '/api/v1/chat/folders', await a.owner.post('/api/v1/chat/folders', { name: 'Hot leads' }), 409);
    await matchesWhole('PUT', '/api/v1/chat/folders/{id}', await a.owner.put(`/api/v1/chat/folders/${folder.body.id}`, { color: '#22C55E' }));
    const filed = await a.owner.post(`/api/v1/chat/folders/${folder.body.id}/conversations`, { conversationIds: [convId] });
    expect(filed.body.conversationCount).toBe(1);
    await matchesWhole('POST', '/api/v1/chat/folders/{id}/conversations', filed);
    await matchesWhole(
      'POST',
      '/api/v1/chat/folders/{id}/conversations',
      await a.owner.post(`/api/v1/chat/folders/${folder.body.id}/conversations`, { conversationIds: [none] }),
      404,
    );
    await matchesWhole('GET', '/api/v1/chat/folders', await a.owner.get('/api/v1/chat/folders'));
    await matchesWhole(
      'DELETE',
      '/api/v1/chat/folders/{id}/conversations/{conversationId}',
      await a.owner.del(`/api/v1/chat/folders/${folder.body.id}/conversations/${convId}`),
      204,
    );
    await matchesWhole('DELETE', '/api/v1/chat/folders/{id}', await a.owner.del(`/api/v1/chat/folders/${folder.body.id}`), 204);

    const preset = await a.owner.post('/api/v1/chat/presets', { name: 'Hours', content: 'We open at nine', category: 'info' });
    expect(preset.status).toBe(201);
    await matchesWhole('POST', '/api/v1/chat/presets', preset);
    await matchesWhole('GET', '/api/v1/chat/presets', await a.owner.get('/api/v1/chat/presets?category=info'));
    await matchesWhole('GET', '/api/v1/chat/presets/{id}', await a.owner.get(`/api/v1/chat/presets/${preset.body.id}`));
    await matchesWhole(
      'PUT',
      '/api/v1/chat/presets/{id}',
      await a.owner.put(`/api/v1/chat/presets/${preset.body.id}`, { content: 'We open at ten' }),
    );
    await matchesWhole('PUT', '/api/v1/chat/presets/{id}', await a.owner.put(`/api/v1/chat/presets/${preset.body.id}`, { name: '' }), 400);
    await matchesWhole('DELETE', '/api/v1/chat/presets/{id}', await a.owner.del(`/api/v1/chat/presets/${preset.body.id}`), 204);
    await matchesWhole('GET', '/api/v1/chat/presets/{id}', await a.owner.get(`/api/v1/chat/presets/${preset.body.id}`), 404);

    // Attachments stream through: multipart in, JSON out; the bytes back with their own type.
    const upload = async (fd: FormData): Promise<Res> => {
      const r = await fetch(`${stack.url}/api/v1/chat/attachments`, { method: 'POST', headers: { authorization: `Bearer ${a.token}` }, body: fd });
      return { status: r.status, body: await r.json(), headers: r.headers };
    };
    const fd = new FormData();
    fd.append('file', new Blob([Buffer.from('opening hours: 9-17\n')], { type: 'text/plain' }), 'hours.txt');
    const file = await upload(fd);
    expect(file.status).toBe(201);
    await matchesWhole('POST', '/api/v1/chat/attachments', file);
    await matchesWhole('POST', '/api/v1/chat/attachments', await upload(new FormData()), 400);
    const bytes = await fetch(`${stack.url}/api/v1/chat/attachments/${file.body.id}`, { headers: { authorization: `Bearer ${a.token}` } });
    expect([bytes.status, await bytes.text()]).toEqual([200, 'opening hours: 9-17\n']);
    expect(Object.keys((await client(stack.url).get('/openapi.json')).body.paths['/api/v1/chat/attachments/{id}'].get.responses)).toContain('200');
    await matchesWhole('GET', '/api/v1/chat/attachments/{id}', await a.owner.get(`/api/v1/chat/attachments/${none}`), 404);
  }, 120_000);

  it('the social network sandbox control answers match /openapi.json', async () => {
    const page = await a.owner.post('/sandbox/socialnet/pages', { name: 'Contract page', followers: 12 });
    expect(page.status).toBe(201);
    await matchesWhole('POST', '/sandbox/socialnet/pages', page);
    await matchesWhole('POST', '/sandbox/socialnet/pages', await a.owner.post('/sandbox/socialnet/pages', { name: '', followers: -1 }), 400);
    const form = await a.owner.post(`/sandbox/socialnet/pages/${page.body.id}/forms`, { name: 'Spring offer' });
    expect(form.status).toBe(201);
    await matchesWhole('POST', '/sandbox/socialnet/pages/{pageId}/forms', form);
    await matchesWhole(
      'POST',
      '/sandbox/socialnet/pages/{pageId}/forms',
      await a.owner.post('/sandbox/socialnet/pages/nope/forms', { name: 'x' }),
      404,
    );
    const leads = await a.owner.post(`/sandbox/socialnet/forms/${form.body.id}/leads`, {
      leads: [{ id: 'lead-1', fullName: 'Hoa Tran', phone: '0905 111 222', city: 'Hue' }],
    });
    expect(leads.body.added).toBe(1);
    await matchesWhole('POST', '/sandbox/socialnet/forms/{formId}/leads', leads);
    await matchesWhole(
      'POST',
      '/sandbox/socialnet/forms/{formId}/leads',
      await a.owner.post(`/sandbox/socialnet/forms/${form.body.id}/leads`, { leads: [] }),
      400,
    );
    await matchesWhole(
      'POST',
      '/sandbox/socialnet/pages/{pageId}/outage',
      await a.owner.post(`/sandbox/socialnet/pages/${page.body.id}/outage`, { afterLeads: 5 }),
    );
    await matchesWhole('POST', '/sandbox/socialnet/pages/{pageId}/revoke', await a.owner.post(`/sandbox/socialnet/pages/${page.body.id}/revoke`));
    await matchesWhole(
      'POST',
      '/sandbox/socialnet/pages/{pageId}/revoke',
      await client(stack.url).post(`/sandbox/socialnet/pages/${page.body.id}/revoke`),
      401,
    );
  });

  /** `check`, after asserting the status the scenario expects (the body is shown when it differs). */
  const expectAt = (status: number, method: string, path: string, res: Res) => {
    expect([method, path, res.status, res.status === status ? null : res.body]).toEqual([method, path, status, null]);
    check(method, path, res);
    return res.body;
  };
  const NOPE = '00000000-0000-4000-8000-000000000000';

  it('automation: templates, rules, campaigns, notifications and reminder settings match /openapi.json', async () => {
    const o = a.owner;
    const tpl = expectAt(
      201,
      'POST',
      '/api/v1/automation/templates',
      await o.post('/api/v1/automation/templates', { name: 'Welcome', content: 'Hi {{name}}!' }),
    );
    expectAt(200, 'GET', '/api/v1/automation/templates', await o.get('/api/v1/automation/templates'));
    expectAt(200, 'GET', '/api/v1/automation/templates/{id}', await o.get(`/api/v1/automation/templates/${tpl.id}`));
    expectAt(200, 'PUT', '/api/v1/automation/templates/{id}', await o.put(`/api/v1/automation/templates/${tpl.id}`, { category: 'greetings' }));
    expectAt(404, 'GET', '/api/v1/automation/templates/{id}', await o.get(`/api/v1/automation/templates/${NOPE}`));

    const ruleBody = {
      name: 'Price question',
      trigger: { type: 'keyword', keywords: ['price'] },
      actions: [
        { type: 'send_message', templateId: tpl.id },
        { type: 'add_tag', tag: 'asked' },
      ],
    };
    const rule = expectAt(201, 'POST', '/api/v1/automation/rules', await o.post('/api/v1/automation/rules', ruleBody));
    expectAt(400, 'POST', '/api/v1/automation/rules', await o.post('/api/v1/automation/rules', { ...ruleBody, actions: 'none' }));
    expectAt(422, 'POST', '/api/v1/automation/rules/{id}/pause', await o.post(`/api/v1/automation/rules/${rule.id}/pause`));
    expectAt(200, 'POST', '/api/v1/automation/rules/{id}/activate', await o.post(`/api/v1/automation/rules/${rule.id}/activate`));
    const scored = await o.post('/api/v1/automation/rules', {
      name: 'Hot lead',
      trigger: { type: 'contact_created', conditions: [{ field: 'leadScore', operator: 'gte', value: 50 }] },
      actions: [{ type: 'add_tag', tag: 'hot' }],
    });
    expect(
      expectAt(200, 'GET', '/api/v1/automation/rules/{id}', await o.get(`/api/v1/automation/rules/${scored.body.id}`)).trigger.conditions[0].value,
    ).toBe(50);
    expect(
      expectAt(200, 'GET', '/api/v1/automation/rules', await o.get('/api/v1/automation/rules?triggerType=keyword')).data[0].trigger.keywords,
    ).toEqual(['price']);
    expectAt(400, 'GET', '/api/v1/automation/rules', await o.get('/api/v1/automation/rules?status=bogus'));
    expectAt(200, 'GET', '/api/v1/automation/rules/{id}/runs', await o.get(`/api/v1/automation/rules/${rule.id}/runs`));
    expectAt(400, 'GET', '/api/v1/automation/rules/{id}/runs', await o.get(`/api/v1/automation/rules/${rule.id}/runs?status=bogus`));
    expectAt(404, 'GET', '/api/v1/automation/runs/{runId}', await o.get(`/api/v1/automation/runs/${NOPE}`));
    expectAt(200, 'POST', '/api/v1/automation/rules/{id}/rotate-secret', await o.post(`/api/v1/automation/rules/${rule.id}/rotate-secret`));
    // Workflow steps read back as written (if with its branches, http_request with its headers).
    const workflow = expectAt(
      201,
      'POST',
      '/api/v1/automation/rules',
      await o.post('/api/v1/automation/rules', {
        name: 'Workflow',
        trigger: { type: 'message_received' },
        actions: [
          { type: 'http_request', url: 'https://example.com/hook', method: 'POST', headers: { 'x-team': 'sales' }, bodyTemplate: '{"a":1}' },
          {
            type: 'if',
            conditions: [{ field: 'steps.0.status', operator: 'equals', value: 200 }],
            then: [{ type: 'wait', minutes: 5 }],
            else: [{ type: 'add_tag', tag: 'hook-failed' }],
          },
        ],
      }),
    );
    expectAt(200, 'GET', '/api/v1/automation/rules/{id}', await o.get(`/api/v1/automation/rules/${workflow.id}`));
    expectAt(422, 'POST', '/api/v1/automation/rules/{id}/run', await o.post(`/api/v1/automation/rules/${workflow.id}/run`, {}));
    const started = expectAt(202, 'POST', '/api/v1/automation/rules/{id}/run', await o.post(`/api/v1/automation/rules/${rule.id}/run`, {}));
    expectAt(200, 'GET', '/api/v1/automation/runs/{runId}', await o.get(`/api/v1/automation/runs/${started.runId}`));
    expectAt(409, 'DELETE', '/api/v1/automation/templates/{id}', await o.del(`/api/v1/automation/templates/${tpl.id}`));
    expectAt(204, 'DELETE', '/api/v1/automation/rules/{id}', await o.del(`/api/v1/automation/rules/${scored.body.id}`));

    const list = await o.post('/api/v1/customer-lists', { name: 'Spring list', criteria: { filters: [] } });
    const campaignBody = { name: 'Spring', type: 'broadcast', listId: list.body.id, templateId: tpl.id };
    const campaign = expectAt(201, 'POST', '/api/v1/campaigns', await o.post('/api/v1/campaigns', campaignBody));
    // No SMTP server (neither the organization's nor SMTP_URL): an email campaign is still created as a draft, and
    // refused when it is started.
    const emailDraft = expectAt(
      201,
      'POST',
      '/api/v1/campaigns',
      await o.post('/api/v1/campaigns', { ...campaignBody, type: 'email', subject: 'Hello' }),
    );
    expectAt(422, 'POST', '/api/v1/campaigns/{id}/activate', await o.post(`/api/v1/campaigns/${emailDraft.id}/activate`));
    expectAt(200, 'GET', '/api/v1/campaigns', await o.get('/api/v1/campaigns'));
    expectAt(200, 'GET', '/api/v1/campaigns/{id}', await o.get(`/api/v1/campaigns/${campaign.id}`));
    expectAt(200, 'PUT', '/api/v1/campaigns/{id}', await o.put(`/api/v1/campaigns/${campaign.id}`, { name: 'Spring sale' }));
    expectAt(200, 'GET', '/api/v1/campaigns/{id}/recipients', await o.get(`/api/v1/campaigns/${campaign.id}/recipients`));
    expectAt(422, 'POST', '/api/v1/campaigns/{id}/pause', await o.post(`/api/v1/campaigns/${campaign.id}/pause`));
    expectAt(200, 'POST', '/api/v1/campaigns/{id}/cancel', await o.post(`/api/v1/campaigns/${campaign.id}/cancel`));
    expectAt(404, 'GET', '/api/v1/campaigns/{id}', await o.get(`/api/v1/campaigns/${NOPE}`));

    expectAt(200, 'GET', '/api/v1/notifications', await o.get('/api/v1/notifications?unreadOnly=true'));
    expectAt(400, 'GET', '/api/v1/notifications', await o.get('/api/v1/notifications?unreadOnly=maybe'));
    expectAt(200, 'POST', '/api/v1/notifications/read-all', await o.post('/api/v1/notifications/read-all'));
    expectAt(404, 'POST', '/api/v1/notifications/{id}/read', await o.post(`/api/v1/notifications/${NOPE}/read`));
    expectAt(200, 'GET', '/api/v1/settings/appointments', await o.get('/api/v1/settings/appointments'));
    expectAt(200, 'PUT', '/api/v1/settings/appointments', await o.put('/api/v1/settings/appointments', { reminderMinutesBefore: 60 }));
    expectAt(400, 'PUT', '/api/v1/settings/appointments', await o.put('/api/v1/settings/appointments', { reminderMinutesBefore: -1 }));
  });

  it('email campaigns: settings, suppressions and the public links (no credential) match /openapi.json', async () => {
    const o = a.owner;
    expect(expectAt(200, 'GET', '/api/v1/settings/email', await o.get('/api/v1/settings/email')).source).toBe('none');
    expectAt(400, 'PUT', '/api/v1/settings/email', await o.put('/api/v1/settings/email', { port: 0 }));
    expectAt(404, 'DELETE', '/api/v1/settings/email', await o.del('/api/v1/settings/email'));
    expectAt(422, 'POST', '/api/v1/settings/email/test', await o.post('/api/v1/settings/email/test', { to: 'ops@example.test' }));
    expectAt(200, 'GET', '/api/v1/email-suppressions', await o.get('/api/v1/email-suppressions'));
    expectAt(400, 'DELETE', '/api/v1/email-suppressions/{email}', await o.del('/api/v1/email-suppressions/not-an-address'));
    expectAt(404, 'DELETE', '/api/v1/email-suppressions/{email}', await o.del('/api/v1/email-suppressions/nobody%40example.test'));
    const anon = client(stack.url);
    expectAt(404, 'GET', '/u/{token}', await anon.get('/u/forged-token'));
    expectAt(404, 'POST', '/u/{token}', await anon.post('/u/forged-token'));
    expectAt(404, 'GET', '/o/{file}', await anon.get('/o/forged-token.gif'));
  });

  it('webhooks: endpoints, a test send and the delivery log match /openapi.json', async () => {
    const o = a.owner;
    expectAt(200, 'GET', '/api/v1/webhook-settings/event-types', await o.get('/api/v1/webhook-settings/event-types'));
    // Nothing listens on port 9: the test send fails at once, so the log holds a failed attempt with its nulls.
    const hook = expectAt(
      201,
      'POST',
      '/api/v1/webhook-settings',
      await o.post('/api/v1/webhook-settings', { url: 'http://127.0.0.1:9/hook', events: ['contact.deleted'] }),
    );
    expect(hook.secret).toMatch(/^whsec_/);
    expectAt(
      400,
      'POST',
      '/api/v1/webhook-settings',
      await o.post('/api/v1/webhook-settings', { url: 'ftp://127.0.0.1/x', events: ['contact.deleted'] }),
    );
    expectAt(200, 'GET', '/api/v1/webhook-settings', await o.get('/api/v1/webhook-settings'));
    expectAt(200, 'GET', '/api/v1/webhook-settings/{id}', await o.get(`/api/v1/webhook-settings/${hook.id}`));
    expectAt(
      200,
      'PUT',
      '/api/v1/webhook-settings/{id}',
      await o.put(`/api/v1/webhook-settings/${hook.id}`, { events: ['contact.deleted', 'appointment.deleted'] }),
    );
    const sent = expectAt(200, 'POST', '/api/v1/webhook-settings/{id}/test', await o.post(`/api/v1/webhook-settings/${hook.id}/test`));
    expect(sent.ok).toBe(false);
    const log = expectAt(200, 'GET', '/api/v1/webhook-settings/{id}/deliveries', await o.get(`/api/v1/webhook-settings/${hook.id}/deliveries`));
    expect(log.data[0].attempts).toHaveLength(1);
    expectAt(
      202,
      'POST',
      '/api/v1/webhook-settings/deliveries/{deliveryId}/redeliver',
      await o.post(`/api/v1/webhook-settings/deliveries/${sent.deliveryId}/redeliver`),
    );
    expectAt(
      404,
      'POST',
      '/api/v1/webhook-settings/deliveries/{deliveryId}/redeliver',
      await o.post(`/api/v1/webhook-settings/deliveries/${NOPE}/redeliver`),
    );
    const window = { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() };
    const replay = expectAt(202, 'POST', '/api/v1/webhook-settings/{id}/replay', await o.post(`/api/v1/webhook-settings/${hook.id}/replay`, window));
    expectAt(400, 'POST', '/api/v1/webhook-settings/{id}/replay', await o.post(`/api/v1/webhook-settings/${hook.id}/replay`, { from: 'x' }));
    expectAt(
      200,
      'GET',
      '/api/v1/webhook-settings/{id}/replays/{replayId}',
      await o.get(`/api/v1/webhook-settings/${hook.id}/replays/${replay.replayId}`),
    );
    expectAt(404, 'GET', '/api/v1/webhook-settings/{id}/replays/{replayId}', await o.get(`/api/v1/webhook-settings/${hook.id}/replays/${NOPE}`));
    expectAt(204, 'DELETE', '/api/v1/webhook-settings/{id}', await o.del(`/api/v1/webhook-settings/${hook.id}`));
    expectAt(404, 'GET', '/api/v1/webhook-settings/{id}', await o.get(`/api/v1/webhook-settings/${hook.id}`));
  });

  it('AI: providers, settings and the assistant (local engine) match /openapi.json', async () => {
    const o = a.owner;
    expectAt(200, 'GET', '/api/v1/ai/providers', await o.get('/api/v1/ai/providers'));
    expect(expectAt(200, 'GET', '/api/v1/ai/providers/{id}/models', await o.get('/api/v1/ai/providers/nope/models')).error).toMatch(
      /Unknown AI provider/,
    );
    expectAt(200, 'PUT', '/api/v1/ai/providers/{id}', await o.put('/api/v1/ai/providers/openai', { baseUrl: '' }));
    expectAt(404, 'PUT', '/api/v1/ai/providers/{id}', await o.put('/api/v1/ai/providers/nope', { apiKey: 'sk-x' }));
    expectAt(200, 'GET', '/api/v1/ai/config', await o.get('/api/v1/ai/config'));
    expectAt(200, 'POST', '/api/v1/ai/sentiment', await o.post('/api/v1/ai/sentiment', { text: 'Thank you, I love it!' }));
    expectAt(400, 'POST', '/api/v1/ai/reply-draft', await o.post('/api/v1/ai/reply-draft', { conversationId: NOPE }));
    expectAt(404, 'POST', '/api/v1/ai/summary', await o.post('/api/v1/ai/summary', { conversationId: NOPE }));
    expectAt(200, 'PUT', '/api/v1/ai/config', await o.put('/api/v1/ai/config', { enabled: false }));
    expectAt(422, 'POST', '/api/v1/ai/sentiment', await o.post('/api/v1/ai/sentiment', { text: 'Still there?' }));
    expectAt(200, 'PUT', '/api/v1/ai/config', await o.put('/api/v1/ai/config', { enabled: true }));
  });

  it('analytics and custom reports match /openapi.json', async () => {
    const o = a.owner;
    expect(
      expectAt(200, 'GET', '/api/v1/analytics/conversion-funnel', await o.get('/api/v1/analytics/conversion-funnel?groupBy=week')).series,
    ).toEqual(expect.any(Array));
    expectAt(200, 'GET', '/api/v1/analytics/conversion-funnel', await o.get('/api/v1/analytics/conversion-funnel'));
    expectAt(400, 'GET', '/api/v1/analytics/conversion-funnel', await o.get('/api/v1/analytics/conversion-funnel?dateFrom=yesterday'));
    expectAt(200, 'GET', '/api/v1/analytics/team-performance', await o.get('/api/v1/analytics/team-performance'));
    expectAt(200, 'GET', '/api/v1/analytics/response-time', await o.get('/api/v1/analytics/response-time?slaMinutes=30'));

    const today = new Date().toISOString().slice(0, 10);
    const report = expectAt(
      201,
      'POST',
      '/api/v1/analytics/custom',
      await o.post('/api/v1/analytics/custom', {
        name: 'Leads by source',
        metrics: ['lead_count'],
        dimensions: ['source'],
        dateFrom: today,
        dateTo: today,
      }),
    );
    expectAt(
      400,
      'POST',
      '/api/v1/analytics/custom',
      await o.post('/api/v1/analytics/custom', { name: 'Bad', metrics: ['nope'], dateFrom: today, dateTo: today }),
    );
    expectAt(200, 'GET', '/api/v1/analytics/custom', await o.get('/api/v1/analytics/custom'));
    const ready = await eventually(async () => {
      const r = await o.get(`/api/v1/analytics/custom/${report.id}`);
      return r.body.status === 'ready' ? r : undefined;
    });
    expectAt(200, 'GET', '/api/v1/analytics/custom/{id}', ready);
    expectAt(200, 'GET', '/api/v1/analytics/custom/{id}/download', await o.get(`/api/v1/analytics/custom/${report.id}/download`));
    expectAt(404, 'GET', '/api/v1/analytics/custom/{id}/download', await o.get(`/api/v1/analytics/custom/${NOPE}/download`));
  });

  it('integrations: the sandbox social network, pages, a lead sync, and lead scoring match /openapi.json', async () => {
    const o = a.owner;
    const page = expectAt(
      201,
      'POST',
      '/sandbox/socialnet/pages',
      await o.post('/sandbox/socialnet/pages', { name: 'Contract Shoes', followers: 10 }),
    );
    const form = expectAt(
      201,
      'POST',
      '/sandbox/socialnet/pages/{pageId}/forms',
      await o.post(`/sandbox/socialnet/pages/${page.id}/forms`, { name: 'Spring form' }),
    );
    expectAt(
      200,
      'POST',
      '/sandbox/socialnet/forms/{formId}/leads',
      await o.post(`/sandbox/socialnet/forms/${form.id}/leads`, { leads: [{ fullName: 'Lead One', phone: '+14155550101', city: 'Hanoi' }] }),
    );
    expectAt(400, 'POST', '/sandbox/socialnet/forms/{formId}/leads', await o.post(`/sandbox/socialnet/forms/${form.id}/leads`, { leads: [] }));
    expectAt(200, 'GET', '/api/v1/integrations/socialnet/credentials', await o.get('/api/v1/integrations/socialnet/credentials'));
    expectAt(200, 'GET', '/api/v1/integrations/socialnet/pages', await o.get('/api/v1/integrations/socialnet/pages'));
    expectAt(422, 'GET', '/api/v1/integrations/socialnet/pages/{id}/forms', await o.get(`/api/v1/integrations/socialnet/pages/${page.id}/forms`));
    const integration = expectAt(
      201,
      'POST',
      '/api/v1/integrations/socialnet/pages/{id}/connect',
      await o.post(`/api/v1/integrations/socialnet/pages/${page.id}/connect`),
    );
    expectAt(
      200,
      'POST',
      '/api/v1/integrations/socialnet/pages/{id}/connect',
      await o.post(`/api/v1/integrations/socialnet/pages/${page.id}/connect`),
    );
    expectAt(200, 'GET', '/api/v1/integrations/socialnet/pages/{id}/forms', await o.get(`/api/v1/integrations/socialnet/pages/${page.id}/forms`));
    const sync = expectAt(
      202,
      'POST',
      '/api/v1/integrations/socialnet/leads/sync',
      await o.post('/api/v1/integrations/socialnet/leads/sync', { pageId: page.id, formId: form.id }),
    );
    expectAt(
      404,
      'POST',
      '/api/v1/integrations/socialnet/leads/sync',
      await o.post('/api/v1/integrations/socialnet/leads/sync', { pageId: page.id, formId: 'no-such-form' }),
    );
    const done = await eventually(async () => {
      const r = await o.get(`/api/v1/integrations/socialnet/leads/sync/${sync.syncId}`);
      return r.body.status !== 'processing' ? r : undefined;
    });
    expect(expectAt(200, 'GET', '/api/v1/integrations/socialnet/leads/sync/{syncId}', done).status).toBe('completed');
    expectAt(200, 'GET', '/api/v1/integrations', await o.get('/api/v1/integrations'));
    expectAt(
      200,
      'POST',
      '/sandbox/socialnet/pages/{pageId}/outage',
      await o.post(`/sandbox/socialnet/pages/${page.id}/outage`, { afterLeads: null }),
    );
    expectAt(200, 'POST', '/sandbox/socialnet/pages/{pageId}/revoke', await o.post(`/sandbox/socialnet/pages/${page.id}/revoke`));
    expectAt(204, 'DELETE', '/api/v1/integrations/{id}', await o.del(`/api/v1/integrations/${integration.id}`));

    expectAt(200, 'GET', '/api/v1/scoring/config', await o.get('/api/v1/scoring/config'));
    expectAt(200, 'PUT', '/api/v1/scoring/config', await o.put('/api/v1/scoring/config', { highValueThreshold: 70 }));
    const rule = expectAt(
      201,
      'POST',
      '/api/v1/scoring/rules',
      await o.post('/api/v1/scoring/rules', { name: 'VIP tag', condition: 'tag_added', value: 'vip', points: 20 }),
    );
    expectAt(400, 'POST', '/api/v1/scoring/rules', await o.post('/api/v1/scoring/rules', { name: 'No points', condition: 'tag_added' }));
    expectAt(200, 'GET', '/api/v1/scoring/rules', await o.get('/api/v1/scoring/rules'));
    expectAt(200, 'GET', '/api/v1/scoring/rules/{id}', await o.get(`/api/v1/scoring/rules/${rule.id}`));
    expectAt(200, 'PUT', '/api/v1/scoring/rules/{id}', await o.put(`/api/v1/scoring/rules/${rule.id}`, { value: null }));
    const contact = (await o.get('/api/v1/contacts')).body.data[0];
    expectAt(200, 'GET', '/api/v1/contacts/{id}/scores', await o.get(`/api/v1/contacts/${contact.id}/scores`));
    expectAt(404, 'GET', '/api/v1/contacts/{id}/scores', await o.get(`/api/v1/contacts/${NOPE}/scores`));
    expectAt(204, 'DELETE', '/api/v1/scoring/rules/{id}', await o.del(`/api/v1/scoring/rules/${rule.id}`));
  });

  it('every public operation was called', () => {
    const all = Object.entries<Record<string, unknown>>(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect(all.filter((op) => !exercised.has(op))).toEqual([]);
  });
});
