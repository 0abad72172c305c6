import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { eventually } from '@crm/testing';
import type { Client } from '../support/http';
import { ConsumerProbe } from '../support/consumers';
import { startStack, Stack } from '../support/stack';
import { fakeCampaignMessaging, fakeCrmLists } from './campaign-fakes';
import { campaignLeases } from './campaign-leases';
import { eventBus, member, messageData, org } from './support';
import { connectPatiently } from '../support/patient-client';

// Campaigns through the gateway: create → draft, the list and detail shapes, validation naming the
// field, permissions (campaigns:manage for writes), org isolation, schedule/activate/pause/cancel,
// recipients, sending through messaging with the template rendered per contact, read receipts as openRate,
// replies as replyRate,
// and a 1,000-contact campaign completing with exact counts. crm (customer lists) and messaging are fakes on
// the real contracts, so failures can be staged; the sender runs fast here. Pacing, restarts and 429s:
// campaign-delivery.test.ts; real contacts over the sandbox network: campaign-sandbox.test.ts.
describe('campaigns', () => {
  let crm: Awaited<ReturnType<typeof fakeCrmLists>>;
  let messaging: Awaited<ReturnType<typeof fakeCampaignMessaging>>;
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let replies: ConsumerProbe;
  let seenReceipts: ConsumerProbe;
  let db: PgClient;
  let leases: ReturnType<typeof campaignLeases>;
  let owner: Client;
  let lead: Client;
  let agent: Client;
  let other: Client;
  let orgId: string;
  let otherOrgId: string;
  let templateId: string;
  let list: ReturnType<Awaited<ReturnType<typeof fakeCrmLists>>['list']>;

  const valid = () => ({
    name: 'Tết sale',
    description: 'Discount codes for our best customers',
    type: 'broadcast',
    listId: list.id,
    templateId,
    variables: { code: 'SALE10' },
  });

  beforeAll(async () => {
    crm = await fakeCrmLists();
    messaging = await fakeCampaignMessaging();
    stack = await startStack({
      services: ['automation'],
      serviceEnv: {
        automation: { CRM_ADDR: crm.addr, MESSAGING_ADDR: messaging.addr, CAMPAIGN_POLL_MS: '100', CAMPAIGN_SEND_PER_MINUTE: '60000' },
      },
    });
    bus = await eventBus(stack);
    db = await connectPatiently(stack.databaseUrl('automation'));
    leases = campaignLeases(db);
    replies = new ConsumerProbe(stack, 'automation', `${stack.env.EVENTS_EXCHANGE}.automation.campaign-replies`);
    seenReceipts = new ConsumerProbe(stack, 'automation', `${stack.env.EVENTS_EXCHANGE}.automation.campaign-seen`);
    const a = await org(stack, 'Acme');
    owner = a.owner;
    orgId = a.orgId;
    lead = (await member(stack, owner, 'team_lead')).api;
    agent = (await member(stack, owner, 'agent')).api;
    const b = await org(stack, 'Other');
    other = b.owner;
    otherOrgId = b.orgId;
    const tpl = await owner.post('/api/v1/automation/templates', { name: 'Sale', content: 'Chào {{name}}, mã giảm giá {{code}} dành cho bạn' });
    templateId = tpl.body.id;
    // Four customers; the last one has never chatted with us.
    list = crm.list(orgId, 4);
    for (const m of list.members.slice(0, 3)) messaging.converse(orgId, m.id);
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await bus?.close();
    await stack?.stop();
    await crm?.stop();
    await messaging?.stop();
  });

  let id: string;

  /** A campaign the owner activates now, to one lead the network does not know: it completes at once, sending nothing. */
  const markerCampaign = async () => {
    const nobody = crm.list(orgId, 1, 'Marker');
    const created = await owner.post('/api/v1/campaigns', { ...valid(), name: 'Marker', listId: nobody.id });
    expect((await owner.post(`/api/v1/campaigns/${created.body.id}/activate`)).status).toBe(200);
    return created.body.id as string;
  };

  it('POST /campaigns (team_lead) creates a draft and answers 201 {id, name, status, createdAt}', async () => {
    const res = await lead.post('/api/v1/campaigns', valid());
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), name: 'Tết sale', status: 'draft', createdAt: expect.any(String) });
    expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
    id = res.body.id;
  });

  it('GET /campaigns is an array of {id, name, type, status, contactCount, sentCount, openRate, createdAt}', async () => {
    const res = await agent.get('/api/v1/campaigns');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { id, name: 'Tết sale', type: 'broadcast', status: 'draft', contactCount: 4, sentCount: 0, openRate: 0, createdAt: expect.any(String) },
    ]);
    expect((await agent.get('/api/v1/campaigns?status=active')).body).toEqual([]);
    expect((await agent.get('/api/v1/campaigns?status=sending')).status).toBe(400);
  });

  it('GET /campaigns/:id shows the whole campaign; a draft counts its list live', async () => {
    const res = await agent.get(`/api/v1/campaigns/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(
      expect.objectContaining({
        id,
        name: 'Tết sale',
        description: 'Discount codes for our best customers',
        type: 'broadcast',
        listId: list.id,
        templateId,
        schedule: null,
        variables: { code: 'SALE10' },
        status: 'draft',
        contactCount: 4,
        sentCount: 0,
        openRate: 0,
        replyRate: 0,
        counts: { total: 4, sent: 0, failed: 0, skipped: 0, pending: 4, replied: 0, cancelled: 0, seen: 0 },
        recipientsReady: false,
      }),
    );
    // A fifth customer joins the list (with a conversation): the draft's count follows.
    const fifth = { ...list.members[0], id: randomUUID(), name: 'Customer 5' };
    crm.members(list.id).push(fifth);
    messaging.converse(orgId, fifth.id);
    expect((await agent.get(`/api/v1/campaigns/${id}`)).body.contactCount).toBe(5);
    expect((await agent.get('/api/v1/campaigns')).body[0].contactCount).toBe(5);
  });

  it('validation: 400 names the field; email is refused with 422 because no email channel exists', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ listId: undefined }, 'listId'],
      [{ listId: randomUUID() }, 'listId'],
      [{ listId: 'not-a-uuid' }, 'listId'],
      [{ listId: crm.list(otherOrgId, 1).id }, 'listId'],
      [{ templateId: undefined }, 'templateId'],
      [{ templateId: randomUUID() }, 'templateId'],
      [{ templateId: 42 }, 'templateId'],
      [{ schedule: 'tomorrow' }, 'schedule'],
      [{ schedule: '2001-01-01T00:00:00.000Z' }, 'schedule'],
      [{ variables: ['SALE10'] }, 'variables'],
      [{ variables: {} }, 'variables'],
      [{ variables: { code: { nested: true } } }, 'variables.code'],
      [{ variables: { code: 'SALE10', 'bad name': 1 } }, 'variables.bad name'],
      [{ type: 'sms' }, 'type'],
      [{ description: 'x'.repeat(2001) }, 'description'],
    ];
    for (const [patch, field] of cases) {
      const res = await lead.post('/api/v1/campaigns', { ...valid(), ...patch });
      expect({ patch, status: res.status }).toEqual({ patch, status: 400 });
      expect({ patch, fields: res.body.error.details.map((d: any) => d.field) }).toEqual({ patch, fields: expect.arrayContaining([field]) });
    }
    expect((await lead.post('/api/v1/campaigns', { ...valid(), type: 'email' })).body.error.details.map((d: any) => d.field)).toEqual(['subject']);
    // A campaign is always created as a draft (the spec), email too without an email channel: starting it is refused.
    const email = await lead.post('/api/v1/campaigns', { ...valid(), type: 'email', subject: 'Tết' });
    expect(email.status).toBe(201);
    expect(email.body.status).toBe('draft');
    const start = await lead.post(`/api/v1/campaigns/${email.body.id}/activate`);
    expect(start.status).toBe(422);
    expect(start.body.error).toEqual(expect.objectContaining({ code: 'channel_unavailable', message: expect.stringMatching(/no email channel/) }));
    expect(start.body.error.details).toEqual([{ field: 'type', message: expect.any(String) }]);
    expect((await lead.post(`/api/v1/campaigns/${email.body.id}/cancel`)).status).toBe(200);
  });

  it('agents read campaigns but every write is 403 (campaigns:manage is team_lead and up)', async () => {
    const writes = [
      agent.post('/api/v1/campaigns', valid()),
      agent.put(`/api/v1/campaigns/${id}`, { name: 'Mine now' }),
      agent.post(`/api/v1/campaigns/${id}/schedule`, { schedule: new Date(Date.now() + 3_600_000).toISOString() }),
      agent.post(`/api/v1/campaigns/${id}/activate`),
      agent.post(`/api/v1/campaigns/${id}/pause`),
      agent.post(`/api/v1/campaigns/${id}/cancel`),
    ];
    for (const res of await Promise.all(writes)) expect(res.status).toBe(403);
    expect((await agent.get(`/api/v1/campaigns/${id}/recipients`)).status).toBe(200);
    expect((await agent.get(`/api/v1/campaigns/${id}`)).body.name).toBe('Tết sale');
  });

  it('unknown and malformed ids are 404 on every route', async () => {
    for (const bad of [randomUUID(), 'nope']) {
      const calls = [
        owner.get(`/api/v1/campaigns/${bad}`),
        owner.put(`/api/v1/campaigns/${bad}`, { name: 'x' }),
        owner.post(`/api/v1/campaigns/${bad}/schedule`, { schedule: new Date(Date.now() + 60_000).toISOString() }),
        owner.post(`/api/v1/campaigns/${bad}/activate`),
        owner.post(`/api/v1/campaigns/${bad}/pause`),
        owner.post(`/api/v1/campaigns/${bad}/cancel`),
        owner.get(`/api/v1/campaigns/${bad}/recipients`),
      ];
      for (const res of await Promise.all(calls)) {
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
    }
  });

  it("another org sees none of it: 404 on every route with this org's ids, and its list is empty", async () => {
    const calls = [
      other.get(`/api/v1/campaigns/${id}`),
      other.put(`/api/v1/campaigns/${id}`, { name: 'Hijacked' }),
      other.post(`/api/v1/campaigns/${id}/schedule`, { schedule: new Date(Date.now() + 60_000).toISOString() }),
      other.post(`/api/v1/campaigns/${id}/activate`),
      other.post(`/api/v1/campaigns/${id}/pause`),
      other.post(`/api/v1/campaigns/${id}/cancel`),
      other.get(`/api/v1/campaigns/${id}/recipients`),
    ];
    for (const res of await Promise.all(calls)) expect(res.status).toBe(404);
    expect((await other.get('/api/v1/campaigns')).body).toEqual([]);
    // Nor can it build a campaign on this org's template or list.
    const theirs = await other.post('/api/v1/campaigns', { ...valid(), listId: crm.list(otherOrgId, 1).id });
    expect(theirs.status).toBe(400);
    expect(theirs.body.error.details[0].field).toBe('templateId');
    expect((await owner.get(`/api/v1/campaigns/${id}`)).body).toEqual(expect.objectContaining({ name: 'Tết sale', status: 'draft' }));
  });

  it('PUT /campaigns/:id changes only the fields sent, while a draft', async () => {
    const at = new Date(Date.now() + 86_400_000).toISOString();
    const res = await lead.put(`/api/v1/campaigns/${id}`, { description: 'Codes for VIPs', schedule: at });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(
      expect.objectContaining({ name: 'Tết sale', description: 'Codes for VIPs', schedule: at, variables: { code: 'SALE10' } }),
    );
    const cleared = await lead.put(`/api/v1/campaigns/${id}`, { schedule: null, variables: { code: 'SALE20' } });
    expect(cleared.body).toEqual(expect.objectContaining({ schedule: null, variables: { code: 'SALE20' } }));
    expect((await lead.put(`/api/v1/campaigns/${id}`, { listId: randomUUID() })).body.error.details[0].field).toBe('listId');
    expect((await lead.put(`/api/v1/campaigns/${id}`, { variables: {} })).body.error.details[0].field).toBe('variables');
    // Becoming an email campaign needs a subject; the channel is checked when it starts.
    expect((await lead.put(`/api/v1/campaigns/${id}`, { type: 'email' })).body.error.details[0].field).toBe('subject');
  });

  it('a template used by a draft campaign cannot be deleted (409)', async () => {
    const res = await owner.del(`/api/v1/automation/templates/${templateId}`);
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/Tết sale/);
  });

  it('POST /:id/schedule then /:id/activate: recipients are snapshotted, nobody is sent to before the schedule', async () => {
    expect((await lead.post(`/api/v1/campaigns/${id}/schedule`, {})).body.error.details[0].field).toBe('schedule');
    expect((await lead.post(`/api/v1/campaigns/${id}/schedule`, { schedule: 'soon' })).status).toBe(400);
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = await lead.post(`/api/v1/campaigns/${id}/schedule`, { schedule: later });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body).toEqual(expect.objectContaining({ status: 'draft', schedule: later }));

    const activated = await lead.post(`/api/v1/campaigns/${id}/activate`);
    expect(activated.status).toBe(200);
    expect(activated.body).toEqual(expect.objectContaining({ status: 'active', activatedAt: expect.any(String), contactCount: 5 }));
    const ready = await eventually(async () => {
      const c = (await lead.get(`/api/v1/campaigns/${id}`)).body;
      return c.recipientsReady ? c : undefined;
    });
    expect(ready.counts).toEqual({ total: 5, sent: 0, failed: 0, skipped: 0, pending: 5, replied: 0, cancelled: 0, seen: 0 });
    // Activating again changes nothing and snapshots nobody twice.
    expect((await lead.post(`/api/v1/campaigns/${id}/activate`)).body.status).toBe('active');
    // The turn that took the snapshot is over, and a later claim has passed the campaign by.
    await leases.passedOver([id], markerCampaign);
    expect(messaging.calls).toHaveLength(0);
    expect((await lead.get(`/api/v1/campaigns/${id}/recipients`)).body.pagination.total).toBe(5);
    // An active campaign is no longer edited.
    const put = await lead.put(`/api/v1/campaigns/${id}`, { name: 'Changed' });
    expect(put.status).toBe(422);
    expect(put.body.error.code).toBe('invalid_state');
  });

  it('rescheduling to now sends the rendered template to every recipient once, through messaging as a campaign; then completed', async () => {
    const res = await lead.post(`/api/v1/campaigns/${id}/schedule`, { schedule: new Date().toISOString() });
    expect(res.status).toBe(200);
    const done = await eventually(async () => {
      const c = (await lead.get(`/api/v1/campaigns/${id}`)).body;
      return c.status === 'completed' ? c : undefined;
    });
    expect(done).toEqual(expect.objectContaining({ status: 'completed', contactCount: 5, sentCount: 4, completedAt: expect.any(String) }));
    expect(done.counts).toEqual({ total: 5, sent: 4, failed: 0, skipped: 1, pending: 0, replied: 0, cancelled: 0, seen: 0 });

    const members = crm.members(list.id);
    const first = members[0];
    const conv = messaging.conversationOf(orgId, first.id)!;
    const sent = messaging.calls.filter((c) => c.conversationId === conv.id);
    expect(sent).toEqual([
      expect.objectContaining({
        orgId,
        content: 'Chào Customer 1, mã giảm giá SALE20 dành cho bạn',
        contentType: 'text',
        source: 'campaign',
        outcome: 'sent',
      }),
    ]);
    expect(sent[0].clientMessageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(messaging.calls.map((c) => c.clientMessageId)).size).toBe(4);
    expect(messaging.calls).toHaveLength(4);

    // The creator is told.
    const note = await eventually(async () => (await lead.get('/api/v1/notifications')).body.data.find((n: any) => n.type === 'campaign_completed'));
    expect(note).toEqual(expect.objectContaining({ resourceId: id, message: expect.stringMatching(/4 sent, 0 failed, 1 skipped of 5/) }));
    // Finished campaigns stay finished.
    for (const path of ['activate', 'pause', 'cancel']) {
      const r = await lead.post(`/api/v1/campaigns/${id}/${path}`);
      expect({ path, status: r.status }).toEqual({ path, status: 422 });
    }
    expect((await lead.post(`/api/v1/campaigns/${id}/schedule`, { schedule: new Date(Date.now() + 60_000).toISOString() })).status).toBe(422);
  });

  it('GET /:id/recipients pages through recipients with status and reason, filterable by status', async () => {
    const all = await agent.get(`/api/v1/campaigns/${id}/recipients`);
    expect(all.status).toBe(200);
    expect(all.body.pagination).toEqual({ total: 5, page: 1, limit: 50, pages: 1 });
    const noConversation = list.members[3];
    expect(all.body.data.find((r: any) => r.contactId === noConversation.id)).toEqual(
      expect.objectContaining({ name: 'Customer 4', status: 'skipped', error: 'not_on_network', sentAt: null, conversationId: null }),
    );
    const first = all.body.data.find((r: any) => r.contactId === list.members[0].id);
    expect(first).toEqual(
      expect.objectContaining({
        status: 'sent',
        error: null,
        attempts: 1,
        sentAt: expect.any(String),
        conversationId: messaging.conversationOf(orgId, list.members[0].id)!.id,
        messageId: expect.any(String),
      }),
    );
    const skipped = await agent.get(`/api/v1/campaigns/${id}/recipients?status=skipped`);
    expect(skipped.body.data.map((r: any) => r.contactId)).toEqual([noConversation.id]);
    const page2 = await agent.get(`/api/v1/campaigns/${id}/recipients?status=sent&limit=3&page=2`);
    expect(page2.body.pagination).toEqual({ total: 4, page: 2, limit: 3, pages: 2 });
    expect(page2.body.data).toHaveLength(1);
    expect((await agent.get(`/api/v1/campaigns/${id}/recipients?status=lost`)).status).toBe(400);
    expect((await agent.get(`/api/v1/campaigns/${id}/recipients?limit=ten`)).status).toBe(400);
  });

  it('replyRate: recipients who wrote back after their message, each counted once (openRate is about reading)', async () => {
    const [a, b] = list.members;
    const convA = messaging.conversationOf(orgId, a.id)!;
    const reply = messageData(a.id, convA.id, 'Cảm ơn shop!');
    const mark = await replies.mark();
    const event = await bus.publish('message.received', orgId, reply);
    await bus.publish('message.received', orgId, reply, event.id); // redelivered
    await bus.publish('message.received', orgId, messageData(a.id, convA.id, 'Mình lấy 2 cái nhé'));
    // From the contact who was skipped, from another org, and from before the campaign: none counts.
    await bus.publish('message.received', orgId, messageData(list.members[3].id, randomUUID(), 'hello'));
    await bus.publish('message.received', otherOrgId, messageData(b.id, randomUUID(), 'hello'));
    await bus.publish(
      'message.received',
      orgId,
      messageData(b.id, messaging.conversationOf(orgId, b.id)!.id, 'old', { sentAt: new Date(Date.now() - 3_600_000).toISOString() }),
    );

    const c = await eventually(async () => {
      const got = (await lead.get(`/api/v1/campaigns/${id}`)).body;
      return got.counts.replied > 0 ? got : undefined;
    });
    // All six deliveries handled: none of the others can still add a reply.
    await replies.settled(mark, 6);
    const after = (await lead.get(`/api/v1/campaigns/${id}`)).body;
    expect(after.counts.replied).toBe(1);
    expect(after.replyRate).toBe(0.25);
    expect(c.replyRate).toBe(0.25);
    // A reply is not a read receipt: nothing was reported seen yet.
    expect(after.openRate).toBe(0);
    expect((await lead.get('/api/v1/campaigns')).body.find((x: any) => x.id === id).openRate).toBe(0);
    const rec = (await lead.get(`/api/v1/campaigns/${id}/recipients?status=sent`)).body.data.find((r: any) => r.contactId === a.id);
    expect(rec.repliedAt).toEqual(expect.any(String));
    expect(rec.seenAt).toBeNull();
  });

  it('openRate is the share of sent messages the network reported seen (message.seen), each recipient counted once', async () => {
    const sent = (await lead.get(`/api/v1/campaigns/${id}/recipients?status=sent`)).body.data as any[];
    expect(sent).toHaveLength(4);
    const [a, b, c] = sent;
    const seenAt = new Date().toISOString();
    const seen = (rows: any[], extra: object = {}) => ({
      messageIds: rows.map((r) => r.messageId),
      conversationId: rows[0].conversationId,
      contactId: rows[0].contactId,
      chatnetAccountId: randomUUID(),
      assigneeId: null,
      seenAt,
      messages: rows.map((r) => ({ id: r.messageId, source: 'campaign', sentAt: r.sentAt })),
      ...extra,
    });
    const mark = await seenReceipts.mark();
    const event = await bus.publish('message.seen', orgId, seen([a]));
    await bus.publish('message.seen', orgId, seen([a]), event.id); // redelivered
    await bus.publish('message.seen', orgId, seen([a]), event.id); // and again
    await bus.publish('message.seen', orgId, seen([a])); // the same receipt under a new id
    await bus.publish('message.seen', orgId, seen([b]));
    // Another org's event naming c's message, and messages no campaign sent: none counts.
    await bus.publish('message.seen', otherOrgId, seen([c]));
    await bus.publish('message.seen', orgId, {
      ...seen([c]),
      messageIds: [randomUUID()],
      messages: [{ id: randomUUID(), source: 'ui', sentAt: seenAt }],
    });

    const got = await eventually(async () => {
      const x = (await lead.get(`/api/v1/campaigns/${id}`)).body;
      return x.counts.seen >= 2 ? x : undefined;
    });
    // All seven deliveries handled: none of the others can still count as seen.
    await seenReceipts.settled(mark, 7);
    const after = (await lead.get(`/api/v1/campaigns/${id}`)).body;
    expect(after.counts.seen).toBe(2);
    expect(after.openRate).toBe(0.5);
    expect(got.openRate).toBe(0.5);
    expect(after.replyRate).toBe(0.25);
    expect((await lead.get('/api/v1/campaigns')).body.find((x: any) => x.id === id).openRate).toBe(0.5);
    const rows = (await lead.get(`/api/v1/campaigns/${id}/recipients?status=sent`)).body.data as any[];
    expect(
      rows
        .filter((r) => r.seenAt !== null)
        .map((r) => r.contactId)
        .sort(),
    ).toEqual([a.contactId, b.contactId].sort());
    expect(rows.find((r) => r.contactId === a.contactId).seenAt).toBe(seenAt);
  });

  it('pause, resume and cancel move between states; a draft cannot be paused; cancelled recipients show as cancelled', async () => {
    const created = await lead.post('/api/v1/campaigns', { ...valid(), name: 'Later', schedule: new Date(Date.now() + 86_400_000).toISOString() });
    const cid = created.body.id;
    const draftPause = await lead.post(`/api/v1/campaigns/${cid}/pause`);
    expect(draftPause.status).toBe(422);
    expect(draftPause.body.error.code).toBe('invalid_state');
    expect((await lead.post(`/api/v1/campaigns/${cid}/activate`)).body.status).toBe('active');
    expect((await lead.post(`/api/v1/campaigns/${cid}/pause`)).body.status).toBe('paused');
    expect((await lead.post(`/api/v1/campaigns/${cid}/pause`)).body.status).toBe('paused');
    expect((await lead.post(`/api/v1/campaigns/${cid}/activate`)).body.status).toBe('active');
    await eventually(async () => (await lead.get(`/api/v1/campaigns/${cid}`)).body.recipientsReady);
    const cancelled = await lead.post(`/api/v1/campaigns/${cid}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual(expect.objectContaining({ status: 'cancelled', cancelledAt: expect.any(String) }));
    expect(cancelled.body.counts).toEqual({ total: 5, sent: 0, failed: 0, skipped: 0, pending: 0, replied: 0, cancelled: 5, seen: 0 });
    expect((await lead.post(`/api/v1/campaigns/${cid}/cancel`)).body.status).toBe('cancelled');
    const recipients = (await lead.get(`/api/v1/campaigns/${cid}/recipients?status=cancelled`)).body;
    expect(recipients.pagination.total).toBe(5);
    expect(recipients.data.every((r: any) => r.status === 'cancelled')).toBe(true);
    expect((await lead.get(`/api/v1/campaigns/${cid}/recipients?status=pending`)).body.data).toEqual([]);
    expect((await lead.post(`/api/v1/campaigns/${cid}/activate`)).status).toBe(422);
    expect((await lead.put(`/api/v1/campaigns/${cid}`, { name: 'Again' })).status).toBe(422);
    // A draft can be cancelled outright.
    const draft = (await lead.post('/api/v1/campaigns', { ...valid(), name: 'Never mind' })).body.id;
    expect((await lead.post(`/api/v1/campaigns/${draft}/cancel`)).body.status).toBe('cancelled');
    expect(messaging.calls.filter((c) => c.content.includes('SALE10') && c.at > Date.now() - 60_000)).toHaveLength(0);
  });

  it('activation re-checks the list: a list deleted since is a 422 naming listId', async () => {
    const gone = crm.list(orgId, 2, 'Temporary');
    const cid = (await lead.post('/api/v1/campaigns', { ...valid(), name: 'Orphan', listId: gone.id })).body.id;
    crm.remove(gone.id);
    const res = await lead.post(`/api/v1/campaigns/${cid}/activate`);
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([{ field: 'listId', message: expect.any(String) }]);
    expect((await lead.get(`/api/v1/campaigns/${cid}`)).body.status).toBe('draft');
  });

  it('a campaign to a 1,000-contact list completes with exact counts, one send per contact', async () => {
    const big = crm.list(orgId, 1000, 'Everyone');
    // 10 never chatted (skipped), 5 conversations refuse messages (failed), the rest are sent.
    big.members.forEach((m, i) => {
      if (i % 100 === 7) return;
      const conv = messaging.converse(orgId, m.id);
      if (i % 200 === 3) messaging.reject(conv.id);
    });
    const before = messaging.calls.length;
    const cid = (await lead.post('/api/v1/campaigns', { ...valid(), name: 'Everyone', listId: big.id, variables: { code: 'BIG', name: 'bạn' } })).body
      .id;
    expect((await lead.post(`/api/v1/campaigns/${cid}/activate`)).status).toBe(200);
    const done = await eventually(
      async () => {
        const c = (await lead.get(`/api/v1/campaigns/${cid}`)).body;
        return c.status === 'completed' ? c : undefined;
      },
      60_000,
      250,
    );
    const calls = messaging.calls.slice(before);
    expect(done.counts).toEqual({ total: 1000, sent: 985, failed: 5, skipped: 10, pending: 0, replied: 0, cancelled: 0, seen: 0 });
    expect(done).toEqual(expect.objectContaining({ contactCount: 1000, sentCount: 985 }));
    expect(calls.filter((c) => c.outcome === 'sent')).toHaveLength(985);
    expect(calls.filter((c) => c.outcome === 'rejected')).toHaveLength(5);
    expect(new Set(calls.map((c) => c.clientMessageId)).size).toBe(calls.length);
    expect(new Set(calls.map((c) => c.conversationId)).size).toBe(990);
    // The snapshot read the list in keyset pages of 500.
    expect(crm.pageCalls.filter((p) => p.listId === big.id).map((p) => [p.after === '', p.limit])).toEqual([
      [true, 500],
      [false, 500],
    ]);
    const failed = (await lead.get(`/api/v1/campaigns/${cid}/recipients?status=failed`)).body;
    expect(failed.pagination.total).toBe(5);
    expect(failed.data[0].error).toMatch(/refused/);
  }, 75_000);
});
