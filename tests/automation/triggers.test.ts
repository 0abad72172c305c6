import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import { ConsumerProbe } from '../support/consumers';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { eventData } from '../support/event-data';
import { contactData, eventBus, fakeCrm, fakeMessaging, member, messageData, org, sleep } from './support';

// Triggers → conditions → actions, end to end: events published into the stack's exchange (as crm and
// messaging would), crm and messaging played by fake gRPC servers of the real contracts, effects and run
// logs observed through the gateway and the fakes.
describe('automation triggers and actions', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let messaging: Awaited<ReturnType<typeof fakeMessaging>>;
  let owner: Client;
  let orgId: string;
  let agentId: string;
  let other: Awaited<ReturnType<typeof org>>;
  let triggers: ConsumerProbe;

  beforeAll(async () => {
    crm = await fakeCrm();
    messaging = await fakeMessaging();
    stack = await startStack({
      services: ['automation'],
      serviceEnv: {
        automation: {
          CRM_ADDR: crm.addr,
          MESSAGING_ADDR: messaging.addr,
          RUN_POLL_MS: '100',
          RUN_RETRY_SCHEDULE: '200ms,200ms,200ms',
          EVENT_RETRY_SCHEDULE: '200ms',
        },
      },
    });
    bus = await eventBus(stack);
    triggers = new ConsumerProbe(stack, 'automation', `${stack.env.EVENTS_EXCHANGE}.automation.triggers`);
    const a = await org(stack, 'Acme');
    owner = a.owner;
    orgId = a.orgId;
    agentId = (await member(stack, owner, 'agent')).id;
    other = await org(stack, 'Other');
  });
  afterAll(async () => {
    await bus?.close();
    await stack?.stop();
    await crm?.stop();
    await messaging?.stop();
  });

  async function activeRule(body: object, as: Client = owner): Promise<string> {
    const created = await as.post('/api/v1/automation/rules', body);
    if (created.status !== 201) throw new Error(`rule create failed: ${JSON.stringify(created.body)}`);
    const act = await as.post(`/api/v1/automation/rules/${created.body.id}/activate`);
    if (act.status !== 200) throw new Error(`activate failed: ${JSON.stringify(act.body)}`);
    return created.body.id;
  }

  const runsOf = async (ruleId: string, as: Client = owner) => (await as.get(`/api/v1/automation/rules/${ruleId}/runs`)).body;
  const finishedRun = (ruleId: string, count = 1) =>
    eventually(async () => {
      const runs = await runsOf(ruleId);
      const done = runs.data.filter((r: any) => ['succeeded', 'failed', 'cancelled'].includes(r.status));
      return done.length >= count ? done : undefined;
    });
  const notificationsOf = async (as: Client = owner) => (await as.get('/api/v1/notifications')).body;

  it('contact_created + conditions + send_notification: a matching new contact raises a notification', async () => {
    const ruleId = await activeRule({
      name: 'Hot chat leads',
      trigger: {
        type: 'contact_created',
        conditions: [
          { field: 'source', operator: 'equals', value: 'chatnet' },
          { field: 'leadScore', operator: 'gte', value: 40 },
          { field: 'tags', operator: 'contains', value: 'zalo-ads' },
        ],
      },
      actions: [
        {
          type: 'send_notification',
          title: 'New lead: {{name}}',
          message: '{{name}} ({{phone}}) came in from {{source}}',
          notificationType: 'new_lead',
        },
      ],
    });
    const cold = contactData({ name: 'Cold Lead', source: 'manual', leadScore: 90, tags: ['zalo-ads'] });
    const hot = contactData({ name: 'Hùng Trần', phone: '+84988000111', source: 'chatnet', leadScore: 55, tags: ['zalo-ads'] });
    const lowScore = contactData({ name: 'Low', source: 'chatnet', leadScore: 10, tags: ['zalo-ads'] });
    const mark = await triggers.mark();
    await bus.publish('contact.created', orgId, { contact: cold });
    await bus.publish('contact.created', orgId, { contact: lowScore });
    const event = await bus.publish('contact.created', orgId, { contact: hot });

    const note = await eventually(async () => (await notificationsOf()).data.find((n: any) => n.type === 'new_lead'));
    expect(note).toEqual({
      id: expect.any(String),
      type: 'new_lead',
      title: 'New lead: Hùng Trần',
      message: 'Hùng Trần (+84988000111) came in from chatnet',
      resourceId: hot.id,
      read: false,
      createdAt: expect.any(String),
    });
    const [run] = await finishedRun(ruleId);
    expect(run).toEqual({
      id: expect.any(String),
      ruleId,
      trigger: 'contact_created',
      eventId: event.id,
      eventType: 'contact.created',
      contactId: hot.id,
      conversationId: null,
      status: 'succeeded',
      steps: [
        {
          path: 'actions.0',
          type: 'send_notification',
          status: 'succeeded',
          startedAt: expect.any(String),
          finishedAt: expect.any(String),
          error: null,
        },
      ],
      startedAt: run.createdAt,
      actionsDone: 1,
      totalActions: 1,
      error: null,
      attempts: 0,
      resumeAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      finishedAt: expect.any(String),
    });
    // All three events handled (a run is inserted in the same transaction): only the matching contact started one.
    await triggers.settled(mark, 3);
    expect((await runsOf(ruleId)).pagination.total).toBe(1);
    const rule = await owner.get(`/api/v1/automation/rules/${ruleId}`);
    expect(rule.body.runCount).toBe(1);
    expect(rule.body.lastRunAt).toEqual(expect.any(String));
    await owner.post(`/api/v1/automation/rules/${ruleId}/pause`);
  });

  it('message_reaction, message_recalled and friend_request_accepted start rules whose conditions and templates read their event', async () => {
    const rules = [
      await activeRule({
        name: 'Hearts',
        trigger: { type: 'message_reaction', conditions: [{ field: 'reaction.by', operator: 'equals', value: 'contact' }] },
        actions: [
          { type: 'send_notification', title: 'Reaction', message: 'The contact reacted {{reaction.emoji}}', notificationType: 'reaction_alert' },
        ],
      }),
      await activeRule({
        name: 'Recalls',
        trigger: { type: 'message_recalled', conditions: [{ field: 'recall.recalledBy', operator: 'equals', value: 'contact' }] },
        actions: [{ type: 'send_notification', title: 'Recall', message: 'A message was taken back', notificationType: 'recall_alert' }],
      }),
      await activeRule({
        name: 'New friend',
        trigger: { type: 'friend_request_accepted' },
        actions: [{ type: 'send_notification', title: 'Friend', message: '{{friendRequest.chatnetUid}} accepted', notificationType: 'friend_alert' }],
      }),
    ];
    const contactId = crm.add(orgId, { name: 'Reacting Contact' }).id;
    await bus.publish('message.reaction', orgId, eventData('message.reaction', { contactId, by: 'agent', emoji: '👍' }));
    await bus.publish('message.reaction', orgId, eventData('message.reaction', { contactId, by: 'contact', emoji: '❤️' }));
    await bus.publish('message.recalled', orgId, eventData('message.recalled', { contactId, recalledBy: 'contact' }));
    await bus.publish('friend_request.accepted', orgId, eventData('friend_request.accepted', { chatnetUid: 'uid-accepting-1' }));
    const notes = await eventually(async () => {
      const data = (await notificationsOf()).data.filter((n: any) => ['reaction_alert', 'recall_alert', 'friend_alert'].includes(n.type));
      return data.length >= 3 ? data : undefined;
    });
    expect(notes.map((n: any) => n.message).sort()).toEqual(['A message was taken back', 'The contact reacted ❤️', 'uid-accepting-1 accepted']);
    for (const id of rules) await owner.post(`/api/v1/automation/rules/${id}/pause`);
  });

  it('a rule acts only while active: drafts and paused rules start nothing', async () => {
    const draft = await owner.post('/api/v1/automation/rules', {
      name: 'Draft',
      trigger: { type: 'contact_created', conditions: [{ field: 'name', operator: 'equals', value: 'Quiet Contact' }] },
      actions: [{ type: 'send_notification', message: 'draft fired' }],
    });
    const paused = await activeRule({
      name: 'Paused',
      trigger: { type: 'contact_created', conditions: [{ field: 'name', operator: 'equals', value: 'quiet contact' }] },
      actions: [{ type: 'send_notification', message: 'paused fired' }],
    });
    await owner.post(`/api/v1/automation/rules/${paused}/pause`);
    // A third, active rule on the same event tells us when the event has been handled.
    const witness = await activeRule({
      name: 'Witness',
      trigger: { type: 'contact_created', conditions: [{ field: 'name', operator: 'equals', value: 'Quiet Contact' }] },
      actions: [{ type: 'add_tag', tag: 'seen' }],
    });
    const contact = crm.add(orgId, { name: 'Quiet Contact' });
    await bus.publish('contact.created', orgId, { contact: contactData({ id: contact.id, name: 'Quiet Contact' }) });
    await finishedRun(witness);
    expect((await runsOf(draft.body.id)).pagination.total).toBe(0);
    expect((await runsOf(paused)).pagination.total).toBe(0);
    expect((await notificationsOf()).data.map((n: any) => n.message)).not.toEqual(expect.arrayContaining(['draft fired', 'paused fired']));
    await owner.post(`/api/v1/automation/rules/${witness}/pause`);
  });

  it('message_received → send_message renders a stored template with contact and message variables into the same conversation', async () => {
    const tpl = await owner.post('/api/v1/automation/templates', {
      name: 'Auto reply',
      content: 'Chào {{name}}, we got "{{message}}". We will call {{phone}}.',
    });
    const ruleId = await activeRule({
      name: 'Auto reply',
      trigger: { type: 'message_received' },
      actions: [{ type: 'send_message', template: tpl.body.id }],
    });
    const contact = crm.add(orgId, { name: 'Mai Phạm', phone: '+84911222333' });
    const conversationId = randomUUID();
    const event = await bus.publish('message.received', orgId, messageData(contact.id, conversationId, 'Is this still available?'));

    const [run] = await finishedRun(ruleId);
    expect(run.status).toBe('succeeded');
    const sent = messaging.messages().filter((m) => m.conversationId === conversationId);
    expect(sent).toEqual([
      {
        orgId,
        conversationId,
        content: 'Chào Mai Phạm, we got "Is this still available?". We will call +84911222333.',
        contentType: 'text',
        clientMessageId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        source: 'automation',
      },
    ]);
    expect(run.eventId).toBe(event.id);
    await owner.post(`/api/v1/automation/rules/${ruleId}/pause`);
  });

  it('keyword trigger: case- and diacritics-aware whole-word match on the message content', async () => {
    const ruleId = await activeRule({
      name: 'Price question',
      trigger: { type: 'keyword', keywords: ['bao gia', 'giá sỉ'] },
      actions: [{ type: 'send_message', template: 'Dạ, {{senderName}} ơi, em gửi báo giá ngay ạ' }],
    });
    const contact = crm.add(orgId);
    const send = async (content: string) => {
      const conversationId = randomUUID();
      await bus.publish('message.received', orgId, messageData(contact.id, conversationId, content, { senderName: 'Lan' }));
      return conversationId;
    };
    const mark = await triggers.mark();
    const hits = [await send('Cho mình xin BÁO GIÁ nhé'), await send('giá sỉ bao nhiêu vậy?'), await send('bao gia?')];
    const misses = [await send('Ông già rồi'), await send('gia si'), await send('baogia'), await send('xin chào')];
    await finishedRun(ruleId, 3);
    // Every message handled: the misses started no run, so nothing can be sent for them later.
    await triggers.settled(mark, hits.length + misses.length);
    expect((await runsOf(ruleId)).pagination.total).toBe(3);
    for (const c of hits)
      expect(
        messaging
          .messages()
          .filter((m) => m.conversationId === c)
          .map((m) => m.content),
      ).toEqual(['Dạ, Lan ơi, em gửi báo giá ngay ạ']);
    for (const c of misses) expect(messaging.messages().filter((m) => m.conversationId === c)).toEqual([]);
    await owner.post(`/api/v1/automation/rules/${ruleId}/pause`);
  });

  it('conditions on the contact of a message (contact.*) are judged with the contact from crm', async () => {
    const ruleId = await activeRule({
      name: 'VIP alert',
      trigger: {
        type: 'message_received',
        conditions: [
          { field: 'contact.tags', operator: 'contains', value: 'VIP' },
          { field: 'contentType', operator: 'in', value: ['text'] },
        ],
      },
      actions: [{ type: 'send_notification', userId: agentId, title: 'VIP {{name}} wrote', message: '{{message}}', notificationType: 'vip_message' }],
    });
    const vip = crm.add(orgId, { name: 'Very Important', tags: ['vip'] });
    const plain = crm.add(orgId, { name: 'Plain' });
    const mark = await triggers.mark();
    await bus.publish('message.received', orgId, messageData(plain.id, randomUUID(), 'hello from plain'));
    await bus.publish('message.received', orgId, messageData(vip.id, randomUUID(), 'hello from vip'));
    const [run] = await finishedRun(ruleId);
    expect(run.contactId).toBe(vip.id);
    // Both messages handled: the plain contact's started no run.
    await triggers.settled(mark, 2);
    expect((await runsOf(ruleId)).pagination.total).toBe(1);
    // The notification went to the agent alone.
    expect((await notificationsOf()).data.find((n: any) => n.type === 'vip_message')).toBeUndefined();
    await owner.post(`/api/v1/automation/rules/${ruleId}/pause`);
  });

  it('conversation_created → assign_user and add_tag through crm PatchContact', async () => {
    const ruleId = await activeRule({
      name: 'Route group chats',
      trigger: { type: 'conversation_created', conditions: [{ field: 'type', operator: 'equals', value: 'group' }] },
      actions: [
        { type: 'assign_user', userId: agentId },
        { type: 'add_tag', tag: 'group-chat' },
      ],
    });
    const contact = crm.add(orgId, { tags: ['existing'] });
    await bus.publish('conversation.created', orgId, {
      id: randomUUID(),
      contactId: contact.id,
      chatnetAccountId: randomUUID(),
      type: 'user',
      threadId: 't1',
    });
    await bus.publish('conversation.created', orgId, {
      id: randomUUID(),
      contactId: contact.id,
      chatnetAccountId: randomUUID(),
      type: 'group',
      threadId: 't2',
    });
    const [run] = await finishedRun(ruleId);
    expect(run).toEqual(expect.objectContaining({ status: 'succeeded', actionsDone: 2, totalActions: 2, contactId: contact.id }));
    expect(crm.patches.filter((p) => p.id === contact.id)).toEqual([
      { orgId, role: 'admin', id: contact.id, assignedUserId: agentId, addTags: [] },
      { orgId, role: 'admin', id: contact.id, assignedUserId: undefined, addTags: ['group-chat'] },
    ]);
    expect(crm.contacts.get(`${orgId}/${contact.id}`)).toEqual(
      expect.objectContaining({ assignedUserId: agentId, tags: ['existing', 'group-chat'] }),
    );
    await owner.post(`/api/v1/automation/rules/${ruleId}/pause`);
  });

  it("appointment_created → send_message goes to the contact's latest conversation; no conversation fails the run with a reason", async () => {
    const ruleId = await activeRule({
      name: 'Appointment confirmation',
      trigger: { type: 'appointment_created', conditions: [{ field: 'appointment.type', operator: 'not_equals', value: 'internal' }] },
      actions: [{ type: 'send_message', template: 'See you for "{{title}}" at {{scheduledAt}}, {{name}}' }],
    });
    const withChat = crm.add(orgId, { name: 'Bảo' });
    const noChat = crm.add(orgId, { name: 'Nobody' });
    const latest = randomUUID();
    messaging.setLatest(orgId, withChat.id, latest);
    const appointment = (contactId: string, title: string) =>
      eventData('appointment.created', {
        appointment: {
          ...eventData('appointment.created').appointment,
          id: randomUUID(),
          contactId,
          title,
          scheduledAt: '2030-01-02T03:00:00.000Z',
          duration: 60,
          status: 'scheduled',
          createdAt: new Date().toISOString(),
        },
      });
    await bus.publish('appointment.created', orgId, appointment(withChat.id, 'Demo'));
    await bus.publish('appointment.created', orgId, appointment(noChat.id, 'Lonely'));
    const runs = await finishedRun(ruleId, 2);
    const byContact = Object.fromEntries(runs.map((r: any) => [r.contactId, r]));
    expect(byContact[withChat.id].status).toBe('succeeded');
    expect(byContact[noChat.id]).toEqual(
      expect.objectContaining({ status: 'failed', actionsDone: 0, error: expect.stringContaining('no conversation') }),
    );
    expect(byContact[noChat.id].error).toContain('actions.0 send_message');
    expect(
      messaging
        .messages()
        .filter((m) => m.conversationId === latest)
        .map((m) => m.content),
    ).toEqual(['See you for "Demo" at 2030-01-02T03:00:00.000Z, Bảo']);

    const failed = await owner.get(`/api/v1/automation/rules/${ruleId}/runs?status=failed`);
    expect(failed.body.data.map((r: any) => r.contactId)).toEqual([noChat.id]);
    await owner.post(`/api/v1/automation/rules/${ruleId}/pause`);
  });

  it('a redelivered event (same id) starts one run and sends one message', async () => {
    const ruleId = await activeRule({
      name: 'Once',
      trigger: { type: 'message_received', conditions: [{ field: 'content', operator: 'contains', value: 'once-only' }] },
      actions: [{ type: 'send_message', template: 'Only once' }],
    });
    const contact = crm.add(orgId);
    const conversationId = randomUUID();
    const data = messageData(contact.id, conversationId, 'please once-only');
    const eventId = randomUUID();
    const mark = await triggers.mark();
    await bus.publish('message.received', orgId, data, eventId);
    await bus.publish('message.received', orgId, data, eventId);
    await finishedRun(ruleId);
    await bus.publish('message.received', orgId, data, eventId);
    // The three deliveries settled: the two copies were recognised as already processed, not lost in flight.
    await triggers.settled(mark, 3);
    expect((await runsOf(ruleId)).pagination.total).toBe(1);
    expect(messaging.calls.filter((c) => c.conversationId === conversationId)).toHaveLength(1);
    await owner.post(`/api/v1/automation/rules/${ruleId}/pause`);
  });

  it('a send whose answer was lost is retried with the same clientMessageId, so the message exists once', async () => {
    const ruleId = await activeRule({
      name: 'Retry',
      trigger: { type: 'message_received', conditions: [{ field: 'content', operator: 'equals', value: 'retry me' }] },
      actions: [{ type: 'send_message', template: 'Sent despite a lost answer' }],
    });
    const contact = crm.add(orgId);
    const conversationId = randomUUID();
    messaging.failNext(1);
    await bus.publish('message.received', orgId, messageData(contact.id, conversationId, 'Retry me'));
    const [run] = await finishedRun(ruleId);
    expect(run.status).toBe('succeeded');
    const calls = messaging.calls.filter((c) => c.conversationId === conversationId);
    expect(calls).toHaveLength(2);
    expect(calls[0].clientMessageId).toBe(calls[1].clientMessageId);
    expect(messaging.messages().filter((m) => m.conversationId === conversationId)).toHaveLength(1);
    await owner.post(`/api/v1/automation/rules/${ruleId}/pause`);
  });

  it('a deleted contact fails an assign_user run at once (no pointless retries)', async () => {
    const ruleId = await activeRule({
      name: 'Assign',
      trigger: { type: 'conversation_created', conditions: [{ field: 'threadId', operator: 'equals', value: 'ghost-thread' }] },
      actions: [{ type: 'assign_user', userId: agentId }],
    });
    await bus.publish('conversation.created', orgId, {
      id: randomUUID(),
      contactId: randomUUID(),
      chatnetAccountId: randomUUID(),
      type: 'user',
      threadId: 'ghost-thread',
    });
    const [run] = await finishedRun(ruleId);
    expect(run).toEqual(expect.objectContaining({ status: 'failed', attempts: 1, error: expect.stringContaining('Contact not found') }));
    await owner.post(`/api/v1/automation/rules/${ruleId}/pause`);
  });

  it("events of one org never start another org's rules", async () => {
    const otherRule = await activeRule(
      { name: 'Other org rule', trigger: { type: 'contact_created' }, actions: [{ type: 'send_notification', message: 'other org saw {{name}}' }] },
      other.owner,
    );
    const mine = await activeRule({
      name: 'Mine',
      trigger: { type: 'contact_created', conditions: [{ field: 'name', operator: 'equals', value: 'Isolated' }] },
      actions: [{ type: 'add_tag', tag: 'x' }],
    });
    const c = crm.add(orgId, { name: 'Isolated' });
    const mark = await triggers.mark();
    await bus.publish('contact.created', orgId, { contact: contactData({ id: c.id, name: 'Isolated' }) });
    await finishedRun(mine);
    // The event is handled once for every rule (one transaction): the other org's rule had its chance.
    await triggers.settled(mark, 1);
    expect((await runsOf(otherRule, other.owner)).pagination.total).toBe(0);
    expect((await other.owner.get('/api/v1/notifications')).body.data).toEqual([]);
    // Nor can the other org read this org's run log.
    expect((await other.owner.get(`/api/v1/automation/rules/${mine}/runs`)).status).toBe(404);
    await owner.post(`/api/v1/automation/rules/${mine}/pause`);
    await other.owner.post(`/api/v1/automation/rules/${otherRule}/pause`);
  });

  describe('wait', () => {
    it('is stored in the database and resumes after the automation service restarts', async () => {
      const ruleId = await activeRule({
        name: 'Follow up later',
        trigger: { type: 'contact_created', conditions: [{ field: 'name', operator: 'equals', value: 'Patient Person' }] },
        actions: [
          { type: 'add_tag', tag: 'first' },
          { type: 'wait', duration: '3s' },
          { type: 'send_notification', message: 'Follow up with {{name}}', notificationType: 'follow_up' },
        ],
      });
      const c = crm.add(orgId, { name: 'Patient Person' });
      await bus.publish('contact.created', orgId, { contact: contactData({ id: c.id, name: 'Patient Person' }) });
      const waiting = await eventually(async () => (await runsOf(ruleId)).data.find((r: any) => r.status === 'waiting'));
      expect(waiting).toEqual(expect.objectContaining({ actionsDone: 2, totalActions: 3, resumeAt: expect.any(String), finishedAt: null }));
      expect(Date.parse(waiting.resumeAt)).toBeGreaterThan(Date.now());

      await stack.restart('automation');
      expect((await notificationsOf()).data.find((n: any) => n.type === 'follow_up')).toBeUndefined();
      const note = await eventually(async () => (await notificationsOf()).data.find((n: any) => n.type === 'follow_up'), 10_000);
      expect(note.message).toBe('Follow up with Patient Person');
      expect(Date.parse(note.createdAt)).toBeGreaterThanOrEqual(Date.parse(waiting.resumeAt));
      const [run] = await finishedRun(ruleId);
      expect(run).toEqual(expect.objectContaining({ status: 'succeeded', actionsDone: 3 }));
      // The first action ran once, before the wait, not again after the restart.
      expect(crm.patches.filter((p) => p.id === c.id)).toHaveLength(1);
      await owner.post(`/api/v1/automation/rules/${ruleId}/pause`);
    });

    it('that fell due while the service was down resumes when it starts again', async () => {
      const ruleId = await activeRule({
        name: 'Due while down',
        trigger: { type: 'contact_created', conditions: [{ field: 'name', operator: 'equals', value: 'Down Time' }] },
        actions: [
          { type: 'wait', duration: '1s' },
          { type: 'send_notification', message: 'resumed {{name}}', notificationType: 'resumed' },
        ],
      });
      await bus.publish('contact.created', orgId, { contact: contactData({ name: 'Down Time' }) });
      await eventually(async () => (await runsOf(ruleId)).data.find((r: any) => r.status === 'waiting'));
      await stack.stopService('automation');
      await sleep(1500);
      await stack.startService('automation');
      const note = await eventually(async () => (await notificationsOf()).data.find((n: any) => n.type === 'resumed'));
      expect(note.message).toBe('resumed Down Time');
      await owner.post(`/api/v1/automation/rules/${ruleId}/pause`);
    });

    it('a rule paused during a wait does not carry on: the run is cancelled', async () => {
      const ruleId = await activeRule({
        name: 'Paused mid-way',
        trigger: { type: 'contact_created', conditions: [{ field: 'name', operator: 'equals', value: 'Half Way' }] },
        actions: [
          { type: 'wait', duration: '1s' },
          { type: 'send_notification', message: 'should not happen', notificationType: 'never' },
        ],
      });
      await bus.publish('contact.created', orgId, { contact: contactData({ name: 'Half Way' }) });
      await eventually(async () => (await runsOf(ruleId)).data.find((r: any) => r.status === 'waiting'));
      await owner.post(`/api/v1/automation/rules/${ruleId}/pause`);
      const [run] = await finishedRun(ruleId);
      expect(run).toEqual(expect.objectContaining({ status: 'cancelled', error: 'Rule is paused', actionsDone: 1 }));
      expect((await notificationsOf()).data.find((n: any) => n.type === 'never')).toBeUndefined();
    });
  });
});
