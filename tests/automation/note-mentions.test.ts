import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { eventually } from '@crm/testing';
import { ConsumerProbe, processedBy } from '../support/consumers';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeMessaging, member, org } from './support';
import { connectPatiently } from '../support/patient-client';

// messaging's conversation.note_created as automation takes it: a `mention` notification for each mentioned user
// (not the author), once per event; and the `conversation_note_created` trigger, whose runs act on the note's
// conversation. Events are published into the stack's exchange as messaging's relay would.
describe('conversation.note_created: mention notifications and the conversation_note_created trigger', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let messaging: Awaited<ReturnType<typeof fakeMessaging>>;
  let created: Array<{ id: string; type: string; orgId: string; data: any }>;
  let db: PgClient;
  let triggers: ConsumerProbe;
  let owner: Client;
  let orgId: string;
  let authorId: string;
  let agent: { api: Client; id: string };
  let lead: { api: Client; id: string };
  let author: Client;

  beforeAll(async () => {
    messaging = await fakeMessaging();
    stack = await startStack({ services: ['automation'], serviceEnv: { automation: { MESSAGING_ADDR: messaging.addr, RUN_POLL_MS: '100' } } });
    bus = await eventBus(stack);
    created = await bus.subscribe('notification.created');
    db = await connectPatiently(stack.databaseUrl('automation'));
    triggers = new ConsumerProbe(stack, 'automation', triggersQueue());
    const a = await org(stack, 'Acme');
    owner = a.owner;
    orgId = a.orgId;
    const w = await member(stack, owner, 'agent', 'writer');
    author = w.api;
    authorId = w.id;
    agent = await member(stack, owner, 'agent');
    lead = await member(stack, owner, 'team_lead');
  });
  afterAll(async () => {
    await db?.end();
    await bus?.close();
    await stack?.stop();
    await messaging?.stop();
  });

  const noteEvent = (d: Record<string, unknown> = {}) => ({
    conversationId: randomUUID(),
    noteId: randomUUID(),
    authorId,
    authorName: 'Anh Agent',
    contactId: randomUUID(),
    contactName: 'Mai Tran',
    mentions: [agent.id, lead.id],
    contentPreview: '@agent user please call her back',
    createdAt: new Date().toISOString(),
    ...d,
  });
  const triggersQueue = () => `${stack.env.EVENTS_EXCHANGE}.automation.triggers`;
  /** automation's trigger consumer (mentions and rule runs) has committed its handling of these events. */
  const handled = (...eventIds: string[]) => processedBy(db, triggersQueue(), eventIds);
  const mentionsOf = async (as: Client) => (await as.get('/api/v1/notifications')).body.data.filter((n: any) => n.type === 'mention');

  it('each mentioned user gets one `mention` notification naming the author and the conversation; the author none; a redelivery adds nothing', async () => {
    const data = noteEvent({ mentions: [agent.id, authorId, 'not-a-user', lead.id, agent.id] });
    const event = await bus.publish('conversation.note_created', orgId, data);
    const [n] = await eventually(async () => {
      const got = await mentionsOf(agent.api);
      return got.length ? got : undefined;
    });
    expect(n).toEqual({
      id: expect.any(String),
      type: 'mention',
      title: 'Anh Agent mentioned you in the conversation with Mai Tran',
      message: 'Anh Agent: @agent user please call her back',
      resourceId: data.conversationId,
      read: false,
      createdAt: expect.any(String),
    });
    await eventually(async () => (await mentionsOf(lead.api)).length === 1);
    // Announced for the gateway's socket push to the user's own room.
    const pushed = await eventually(async () => created.find((e) => e.data.id === n.id));
    expect(pushed.data).toEqual(expect.objectContaining({ userId: agent.id, type: 'mention', resourceId: data.conversationId }));

    const mark = await triggers.mark();
    await bus.publish('conversation.note_created', orgId, data, event.id);
    // The copy was settled (recognised as processed: it writes no row of its own).
    await triggers.settled(mark, 1);
    expect(await mentionsOf(agent.api)).toHaveLength(1);
    expect(await mentionsOf(lead.api)).toHaveLength(1);
    expect(await mentionsOf(author)).toEqual([]);
    expect(await mentionsOf(owner)).toEqual([]);
  });

  it('without names the text still says who and where in general terms; a note without mentions notifies nobody', async () => {
    const data = noteEvent({ authorName: '', contactName: '', mentions: [lead.id], contentPreview: '' });
    await bus.publish('conversation.note_created', orgId, data);
    const n = await eventually(async () => (await mentionsOf(lead.api)).find((x: any) => x.resourceId === data.conversationId));
    expect([n.title, n.message]).toEqual(['A teammate mentioned you in a conversation', 'A teammate mentioned you in a private note.']);

    const quiet = noteEvent({ mentions: [] });
    const event = await bus.publish('conversation.note_created', orgId, quiet);
    await handled(event.id);
    for (const as of [agent.api, lead.api, author, owner])
      expect((await mentionsOf(as)).filter((x: any) => x.resourceId === quiet.conversationId)).toEqual([]);
  });

  it('a conversation_note_created rule matches on the note (note.mentions) and sends into the note’s conversation', async () => {
    const rule = await owner.post('/api/v1/automation/rules', {
      name: 'Lead mentioned',
      trigger: { type: 'conversation_note_created', conditions: [{ field: 'note.mentions', operator: 'contains', value: lead.id }] },
      actions: [{ type: 'send_message', template: 'Hi {{note.contactName}}, {{authorName}} asked our team lead to help.' }],
    });
    expect(rule.status).toBe(201);
    expect((await owner.post(`/api/v1/automation/rules/${rule.body.id}/activate`)).status).toBe(200);
    const listed = await owner.get('/api/v1/automation/rules?triggerType=conversation_note_created');
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((r: any) => r.id)).toEqual([rule.body.id]);

    const skipped = noteEvent({ mentions: [agent.id] });
    const matched = noteEvent();
    const skippedEvent = await bus.publish('conversation.note_created', orgId, skipped);
    await bus.publish('conversation.note_created', orgId, matched);
    const sent = await eventually(async () => messaging.calls.find((c) => c.conversationId === matched.conversationId));
    expect(sent).toEqual(expect.objectContaining({ orgId, content: 'Hi Mai Tran, Anh Agent asked our team lead to help.', source: 'automation' }));
    // A run is started in the transaction that handles its event: the skipped note's is committed, and started none.
    await handled(skippedEvent.id);
    expect((await owner.get(`/api/v1/automation/rules/${rule.body.id}/runs`)).body.pagination.total).toBe(1);
    expect(messaging.calls.filter((c) => c.conversationId === skipped.conversationId)).toEqual([]);
  });
});
