import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import { ConsumerProbe } from '../support/consumers';
import { connectPatiently } from '../support/patient-client';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { contactData, eventBus, member, org, sleep } from './support';

// In-app notifications through the gateway: who sees which (own, org-wide, admins only), read state per
// reader, unreadOnly and unreadCount, read / read-all, the notification.created event, and the system
// events that raise them (webhook disabled, high-value lead).
describe('notifications', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let created: Array<{ id: string; type: string; orgId: string; data: any }>;
  let owner: Client;
  let orgId: string;
  let admin: Client;
  let agent: Client;
  let agentId: string;
  let lead: Client;
  let other: Awaited<ReturnType<typeof org>>;
  let triggers: ConsumerProbe;

  beforeAll(async () => {
    stack = await startStack({ services: ['automation'], serviceEnv: { automation: { RUN_POLL_MS: '100', HIGH_VALUE_LEAD_SCORE: '80' } } });
    bus = await eventBus(stack);
    triggers = new ConsumerProbe(stack, 'automation', `${stack.env.EVENTS_EXCHANGE}.automation.triggers`);
    created = await bus.subscribe('notification.created');
    const a = await org(stack, 'Acme');
    owner = a.owner;
    orgId = a.orgId;
    admin = (await member(stack, owner, 'admin')).api;
    const ag = await member(stack, owner, 'agent');
    agent = ag.api;
    agentId = ag.id;
    lead = (await member(stack, owner, 'team_lead')).api;
    other = await org(stack, 'Other');
  });
  afterAll(async () => {
    await bus?.close();
    await stack?.stop();
  });

  const list = async (as: Client, query = '') => (await as.get(`/api/v1/notifications${query}`)).body;

  it('GET /notifications is empty at first: {data, unreadCount, pagination}', async () => {
    const res = await owner.get('/api/v1/notifications');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], unreadCount: 0, pagination: { total: 0, page: 1, limit: 50, pages: 0 } });
  });

  let webhookNote: any;

  it('webhook.disabled raises one notification for the admins and owners of the org only', async () => {
    const webhookId = randomUUID();
    await bus.publish('webhook.disabled', orgId, { webhookId, url: 'https://hooks.example.test/crm', reason: 'failing for 5 days' });
    const body = await eventually(async () => {
      const b = await list(owner);
      return b.data.length === 1 ? b : undefined;
    });
    webhookNote = body.data[0];
    expect(webhookNote).toEqual({
      id: expect.any(String),
      type: 'webhook_disabled',
      title: 'Webhook endpoint disabled',
      message: expect.stringContaining('https://hooks.example.test/crm'),
      resourceId: webhookId,
      read: false,
      createdAt: expect.any(String),
    });
    expect(webhookNote.message).toContain('failing for 5 days');
    expect(body.unreadCount).toBe(1);
    expect((await list(admin)).data.map((n: any) => n.id)).toEqual([webhookNote.id]);
    expect((await list(lead)).data).toEqual([]);
    expect((await list(agent)).data).toEqual([]);
    expect((await list(other.owner)).data).toEqual([]);

    // And it was announced for the gateway's socket.io push (to the org room, marked for admins).
    const event = await eventually(async () => created.find((e) => e.data.id === webhookNote.id));
    expect(event).toEqual(
      expect.objectContaining({
        type: 'notification.created',
        orgId,
        data: {
          id: webhookNote.id,
          audienceRole: 'admin',
          type: 'webhook_disabled',
          title: 'Webhook endpoint disabled',
          message: webhookNote.message,
          resourceId: webhookId,
        },
      }),
    );
  });

  it('read state is per reader: the owner reading it leaves it unread for the admin', async () => {
    const res = await owner.post(`/api/v1/notifications/${webhookNote.id}/read`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: expect.any(String) });
    const mine = await list(owner);
    expect(mine.data[0].read).toBe(true);
    expect(mine.unreadCount).toBe(0);
    const theirs = await list(admin);
    expect(theirs.data[0].read).toBe(false);
    expect(theirs.unreadCount).toBe(1);
    // Reading twice is fine.
    expect((await owner.post(`/api/v1/notifications/${webhookNote.id}/read`)).status).toBe(200);
  });

  it('users cannot read (or mark) notifications that are not theirs: 404', async () => {
    for (const [who, id] of [
      [agent, webhookNote.id],
      [other.owner, webhookNote.id],
      [owner, randomUUID()],
      [owner, 'not-an-id'],
    ] as Array<[Client, string]>) {
      const res = await who.post(`/api/v1/notifications/${id}/read`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
  });

  it('send_notification with userId reaches that user alone; without one, everyone in the org', async () => {
    const rule = await owner.post('/api/v1/automation/rules', {
      name: 'Tell the agent',
      trigger: { type: 'contact_created' },
      actions: [
        {
          type: 'send_notification',
          userId: agentId,
          title: 'Yours: {{name}}',
          message: 'Call {{name}} at {{phone}}',
          notificationType: 'assigned_lead',
        },
        { type: 'send_notification', message: '{{name}} joined', notificationType: 'new_contact' },
      ],
    });
    expect(rule.status).toBe(201);
    await owner.post(`/api/v1/automation/rules/${rule.body.id}/activate`);
    const contact = contactData({ name: 'Quang', phone: '+84900000001' });
    await bus.publish('contact.created', orgId, { contact });

    const agentView = await eventually(async () => {
      const b = await list(agent);
      return b.data.length === 2 ? b : undefined;
    });
    expect(agentView.data.map((n: any) => [n.type, n.title, n.message, n.resourceId])).toEqual([
      ['new_contact', 'Tell the agent', 'Quang joined', contact.id],
      ['assigned_lead', 'Yours: Quang', 'Call Quang at +84900000001', contact.id],
    ]);
    expect(agentView.unreadCount).toBe(2);
    const ownerView = await list(owner);
    expect(ownerView.data.map((n: any) => n.type)).toEqual(['new_contact', 'webhook_disabled']);
    expect((await list(lead)).data.map((n: any) => n.type)).toEqual(['new_contact']);

    const personal = agentView.data.find((n: any) => n.type === 'assigned_lead');
    expect((await owner.post(`/api/v1/notifications/${personal.id}/read`)).status).toBe(404);
    const event = await eventually(async () => created.find((e) => e.data.id === personal.id));
    expect(event.data).toEqual({
      id: personal.id,
      userId: agentId,
      type: 'assigned_lead',
      title: 'Yours: Quang',
      message: 'Call Quang at +84900000001',
      resourceId: contact.id,
    });
    const orgWide = await eventually(async () => created.find((e) => e.data.type === 'new_contact'));
    expect(orgWide.data.userId).toBeUndefined();
    await owner.post(`/api/v1/automation/rules/${rule.body.id}/pause`);
  });

  it('unreadOnly lists only unread ones; pagination; a bad unreadOnly is 400', async () => {
    const unread = await list(owner, '?unreadOnly=true');
    expect(unread.data.map((n: any) => n.type)).toEqual(['new_contact']);
    expect(unread.unreadCount).toBe(1);
    expect(unread.pagination.total).toBe(1);
    const all = await list(owner, '?unreadOnly=false');
    expect(all.pagination.total).toBe(2);
    const page = await list(owner, '?page=2&limit=1');
    expect(page.data.map((n: any) => n.type)).toEqual(['webhook_disabled']);
    expect(page.pagination).toEqual({ total: 2, page: 2, limit: 1, pages: 2 });
    expect(page.unreadCount).toBe(1);
    const bad = await owner.get('/api/v1/notifications?unreadOnly=maybe');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe('unreadOnly');
    expect((await owner.get('/api/v1/notifications?limit=x')).status).toBe(400);
  });

  it('POST /notifications/read-all marks every visible one read for the caller only', async () => {
    const res = await agent.post('/api/v1/notifications/read-all');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: '2 notifications marked as read', updated: 2 });
    const after = await list(agent);
    expect(after.unreadCount).toBe(0);
    expect(after.data.every((n: any) => n.read)).toBe(true);
    expect((await list(agent, '?unreadOnly=true')).data).toEqual([]);
    expect((await list(owner)).unreadCount).toBe(1);
    expect((await agent.post('/api/v1/notifications/read-all')).body.updated).toBe(0);
  });

  it('a contact reaching the high-value score raises one high_value_lead notification (to its assignee), again only after dropping below', async () => {
    const contact = contactData({ name: 'Big Fish', leadScore: 30, assignedUserId: agentId });
    // Events carry their time (occurredAt); they may be handled out of order, and an older one never undoes a newer one.
    await bus.publish('contact.created', orgId, { contact });
    await sleep(20);
    await bus.publish('contact.updated', orgId, { contact: { ...contact, leadScore: 85 }, changes: ['leadScore'] });
    await sleep(20);
    const first = await eventually(async () => (await list(agent)).data.find((n: any) => n.type === 'high_value_lead'));
    expect(first).toEqual(
      expect.objectContaining({ title: 'High-value lead', message: 'Big Fish reached a lead score of 85', resourceId: contact.id, read: false }),
    );
    let mark = await triggers.mark();
    await bus.publish('contact.updated', orgId, { contact: { ...contact, leadScore: 92 }, changes: ['leadScore'] });
    // Handled (the notification would be written in the same transaction): staying high raises nothing new.
    await triggers.settled(mark, 1);
    expect((await list(agent)).data.filter((n: any) => n.type === 'high_value_lead')).toHaveLength(1);
    // Assigned to the agent: nobody else is told.
    expect((await list(owner)).data.find((n: any) => n.type === 'high_value_lead')).toBeUndefined();

    mark = await triggers.mark();
    await bus.publish('contact.updated', orgId, { contact: { ...contact, leadScore: 20 }, changes: ['leadScore'] });
    await triggers.settled(mark, 1);
    await bus.publish('contact.updated', orgId, { contact: { ...contact, leadScore: 81 }, changes: ['leadScore'] });
    await eventually(async () => (await list(agent)).data.filter((n: any) => n.type === 'high_value_lead').length === 2);

    // Unassigned: the whole org hears about it.
    const unassigned = contactData({ name: 'Open Lead', leadScore: 99 });
    await bus.publish('contact.created', orgId, { contact: unassigned });
    const note = await eventually(async () => (await list(lead)).data.find((n: any) => n.type === 'high_value_lead'));
    expect(note.resourceId).toBe(unassigned.id);
  });

  it('a contact created below the threshold writes no lead-score row; its first high score still notifies once', async () => {
    const db = await connectPatiently(stack.databaseUrl('automation'));
    try {
      const contact = contactData({ name: 'Quiet Start', leadScore: 0, assignedUserId: agentId });
      const mark = await triggers.mark();
      await bus.publish('contact.created', orgId, { contact });
      await triggers.settled(mark, 1);
      const rows = async () =>
        (await db.query('SELECT score, high FROM lead_scores WHERE org_id = $1 AND contact_id = $2', [orgId, contact.id])).rows;
      expect(await rows()).toEqual([]);
      await sleep(20);
      await bus.publish('contact.updated', orgId, { contact: { ...contact, leadScore: 90 }, changes: ['leadScore'] });
      await eventually(async () => (await list(agent)).data.find((n: any) => n.type === 'high_value_lead' && n.resourceId === contact.id));
      expect(await rows()).toEqual([{ score: 90, high: true }]);
    } finally {
      await db.end();
    }
  });

  it('an event carrying highValueThreshold (crm lead scoring) is judged against it; other contact updates do not reset the contact', async () => {
    const contact = contactData({ name: 'Org Threshold', leadScore: 10, assignedUserId: agentId });
    await bus.publish('contact.created', orgId, { contact });
    await sleep(20);
    // 60 is below HIGH_VALUE_LEAD_SCORE (80) but above the org's threshold carried by the event.
    await bus.publish('contact.updated', orgId, { contact: { ...contact, leadScore: 60 }, changes: ['leadScore'], highValueThreshold: 50 });
    const note = await eventually(async () => (await list(agent)).data.find((n: any) => n.type === 'high_value_lead' && n.resourceId === contact.id));
    expect(note.message).toBe('Org Threshold reached a lead score of 60');
    await sleep(20);
    // A rename carries the score unchanged and no threshold: not judged against 80, so the contact stays high.
    const mark = await triggers.mark();
    await bus.publish('contact.updated', orgId, { contact: { ...contact, name: 'Renamed', leadScore: 60 }, changes: ['name'] });
    await sleep(20);
    await bus.publish('contact.updated', orgId, { contact: { ...contact, leadScore: 70 }, changes: ['leadScore'], highValueThreshold: 50 });
    // Both updates handled: neither the rename nor 70 counted as a new crossing.
    await triggers.settled(mark, 2);
    expect((await list(agent)).data.filter((n: any) => n.type === 'high_value_lead' && n.resourceId === contact.id)).toHaveLength(1);
  });

  it('an event whose data does not fit its schema is dead-lettered at once with the fields named, and notifies nobody', async () => {
    const before = (await list(owner)).pagination.total;
    const dead = await triggers.count('dead');
    // A webhook.disabled from a producer that forgot the url and wrote a webhook id that is no id.
    const bad = await bus.publish('webhook.disabled', orgId, { webhookId: 'hook-7', reason: 'failing for 5 days' });
    const parked = await bus.deadLettered(`${stack.env.EVENTS_EXCHANGE}.automation.triggers`);
    expect(parked.event.id).toBe(bad.id);
    expect(parked.headers).toMatchObject({
      'x-crm-attempt': 1,
      'x-crm-error':
        'webhook.disabled v1 data does not match its schema: webhookId: Invalid GUID; url: Invalid input: expected string, received undefined',
    });
    // Counted once the broker confirmed the parked copy, a moment after it is there to read.
    await eventually(async () => (await triggers.count('dead')) === dead + 1);
    expect((await list(owner)).pagination.total).toBe(before);
  });

  it('events with a malformed org id are ignored, not retried forever', async () => {
    const before = (await list(owner)).pagination.total;
    const mark = await triggers.mark();
    const acked = await triggers.count('ack');
    await bus.publish('webhook.disabled', 'not-an-org', { webhookId: randomUUID(), url: 'https://x.test', reason: 'r' });
    await triggers.settled(mark, 1);
    // Settled by an ack (dropped), not sent to a retry queue.
    expect(await triggers.count('ack')).toBe(acked + 1);
    expect((await list(owner)).pagination.total).toBe(before);
  });
});
