import { randomUUID } from 'node:crypto';
import { connect } from 'amqplib';
import { Client as PgClient } from 'pg';
import { amqpUser, EventConsumer } from '@crm/events';
import { createLogger } from '@crm/logger';
import { eventually, infra } from '@crm/testing';
import { ConsumerProbe, processedBy } from '../support/consumers';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { contactData, eventBus, fakeCrm, messageData, org } from './support';
import { eventData } from '../support/event-data';
import { connectPatiently } from '../support/patient-client';

// Issue #28 (CPU per message): rule triggers, campaign replies and read receipts take their events from one queue, the
// triggers queue, each as a share with its own processed_events rows (named after the queue it had before). One
// message.received is one delivery that reaches both shares taking it; a share that fails on an event is retried
// alone, while the others' effects for it, and the rest of its batch, commit at once and are never applied again.
describe('automation: one queue for triggers, campaign replies and read receipts', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let db: PgClient;
  let owner: Client;
  let orgId: string;
  let queueProbe: ConsumerProbe;
  let repliesProbe: ConsumerProbe;
  let seenProbe: ConsumerProbe;
  /** Contacts crm fails to answer for (INTERNAL), as when crm is down for them: the triggers share's poison. */
  const failing = new Set<string>();
  const name = (part: string) => `${stack.env.EVENTS_EXCHANGE}.automation.${part}`;

  beforeAll(async () => {
    crm = await fakeCrm();
    const lookup = crm.contacts.get.bind(crm.contacts);
    crm.contacts.get = (key: string) => {
      if (failing.has(key.split('/')[1])) throw new Error('crm cannot read this contact right now');
      return lookup(key);
    };
    stack = await startStack({
      services: ['automation'],
      serviceEnv: { automation: { CRM_ADDR: crm.addr, EVENT_RETRY_SCHEDULE: '300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms' } },
    });
    bus = await eventBus(stack);
    db = await connectPatiently(stack.databaseUrl('automation'));
    queueProbe = new ConsumerProbe(stack, 'automation', name('triggers'));
    repliesProbe = new ConsumerProbe(stack, 'automation', name('campaign-replies'));
    seenProbe = new ConsumerProbe(stack, 'automation', name('campaign-seen'));
    const a = await org(stack, 'Acme');
    owner = a.owner;
    orgId = a.orgId;
    // A rule judging the contact's fields: every message.received of the org needs the contact from crm first.
    const rule = await owner.post('/api/v1/automation/rules', {
      name: 'VIP wrote',
      trigger: { type: 'message_received', conditions: [{ field: 'contact.tags', operator: 'contains', value: 'vip' }] },
      actions: [{ type: 'send_notification', title: '{{name}} wrote', message: '{{message}}', notificationType: 'vip_message' }],
    });
    expect(rule.status).toBe(201);
    ruleId = rule.body.id;
    expect((await owner.post(`/api/v1/automation/rules/${ruleId}/activate`)).status).toBe(200);
  });
  afterAll(async () => {
    await db?.end();
    await bus?.close();
    await stack?.stop();
    await crm?.stop();
  });
  let ruleId: string;

  const runsFor = async (eventId: string) =>
    ((await owner.get(`/api/v1/automation/rules/${ruleId}/runs?limit=100`)).body.data as Array<{ eventId: string }>).filter(
      (r) => r.eventId === eventId,
    );
  const claimedBy = async (consumer: string, eventId: string) =>
    (await db.query<{ at: Date }>('SELECT processed_at AS at FROM processed_events WHERE consumer = $1 AND event_id = $2', [consumer, eventId])).rows;
  const seenData = () => ({
    messageIds: [randomUUID()],
    conversationId: randomUUID(),
    contactId: randomUUID(),
    chatnetAccountId: randomUUID(),
    assigneeId: null,
    seenAt: new Date().toISOString(),
    messages: [],
  });

  it('declares one queue: the replies and read-receipt queues of older versions are not created', async () => {
    const connection = await connect(infra.amqpUrl);
    try {
      const exists = async (queue: string) => {
        const channel = await connection.createChannel();
        channel.on('error', () => undefined);
        return channel.checkQueue(queue).then(
          () => channel.close().then(() => true),
          () => false,
        );
      };
      expect(await exists(name('triggers'))).toBe(true);
      expect(await exists(name('campaign-replies'))).toBe(false);
      expect(await exists(name('campaign-seen'))).toBe(false);
    } finally {
      await connection.close();
    }
  });

  it('one message.received is one delivery that reaches the triggers and the replies; a message.seen reaches the read receipts', async () => {
    const vip = crm.add(orgId, { name: 'Very Important', tags: ['vip'] });
    const marks = { queue: await queueProbe.mark(), replies: await repliesProbe.mark(), seen: await seenProbe.mark() };
    const received = await bus.publish('message.received', orgId, messageData(vip.id, randomUUID(), 'hello'));
    const seen = await bus.publish('message.seen', orgId, seenData());

    await processedBy(db, name('triggers'), [received.id]);
    await processedBy(db, name('campaign-replies'), [received.id]);
    await processedBy(db, name('campaign-seen'), [seen.id]);
    await queueProbe.settled(marks.queue, 2);
    // The rule judged the contact from crm and started one run; the other shares took only their own type.
    expect(await runsFor(received.id)).toHaveLength(1);
    expect(await claimedBy(name('triggers'), seen.id)).toEqual([]);
    expect(await claimedBy(name('campaign-replies'), seen.id)).toEqual([]);
    expect(await claimedBy(name('campaign-seen'), received.id)).toEqual([]);
    // Two deliveries of the one queue; each share counted the deliveries it took.
    expect(await queueProbe.count()).toBe(marks.queue + 2);
    expect(await repliesProbe.count()).toBe(marks.replies + 1);
    expect(await seenProbe.count()).toBe(marks.seen + 1);
  });

  it('what no rule listens to costs no transaction: a conversation started, a message sent, an identity linked, a contact created are acked unclaimed', async () => {
    const quiet = await org(stack, 'Quiet shop');
    const contactId = randomUUID();
    const mark = await queueProbe.mark();
    const nothing = [
      await bus.publish('conversation.created', quiet.orgId, eventData('conversation.created', { id: randomUUID(), contactId })),
      await bus.publish('message.sent', quiet.orgId, eventData('message.sent', { messageId: randomUUID(), contactId })),
      await bus.publish('contact.updated', quiet.orgId, { contact: contactData({ id: contactId }), changes: ['chatnetUid'] }),
      // A public create or a new sender: below the high-value score (80 by default), nothing to record.
      await bus.publish('contact.created', quiet.orgId, { contact: contactData({ id: randomUUID(), leadScore: 79.4 }) }),
    ];
    // A score announced is judged whatever the rules (a high-value lead notification), so it is claimed; so is a contact
    // created at the high-value score.
    const scored = await bus.publish('contact.updated', quiet.orgId, {
      contact: contactData({ id: contactId, leadScore: 10 }),
      changes: ['leadScore'],
      highValueThreshold: 80,
    });
    const high = await bus.publish('contact.created', quiet.orgId, { contact: contactData({ id: randomUUID(), leadScore: 79.5 }) });
    await queueProbe.settled(mark, 6);
    await processedBy(db, name('triggers'), [scored.id, high.id]);
    for (const e of nothing) expect(await claimedBy(name('triggers'), e.id)).toEqual([]);

    // With a rule listening, the conversation started is claimed and runs it.
    const rule = await quiet.owner.post('/api/v1/automation/rules', {
      name: 'New conversation',
      trigger: { type: 'conversation_created' },
      actions: [{ type: 'send_notification', title: 'New conversation', message: 'hello', notificationType: 'new_conversation' }],
    });
    expect((await quiet.owner.post(`/api/v1/automation/rules/${rule.body.id}/activate`)).status).toBe(200);
    const started = await bus.publish('conversation.created', quiet.orgId, eventData('conversation.created', { id: randomUUID(), contactId }));
    await processedBy(db, name('triggers'), [started.id]);
    const runs = (await quiet.owner.get(`/api/v1/automation/rules/${rule.body.id}/runs?limit=10`)).body.data as Array<{ eventId: string }>;
    expect(runs.map((r) => r.eventId)).toEqual([started.id]);

    // The same for a contact created: with a contact_created rule active, a new contact is claimed and runs it.
    const welcome = await quiet.owner.post('/api/v1/automation/rules', {
      name: 'New contact',
      trigger: { type: 'contact_created' },
      actions: [{ type: 'send_notification', title: 'New contact', message: 'hello', notificationType: 'new_contact' }],
    });
    expect((await quiet.owner.post(`/api/v1/automation/rules/${welcome.body.id}/activate`)).status).toBe(200);
    const lead = await bus.publish('contact.created', quiet.orgId, { contact: contactData({ id: randomUUID(), leadScore: 0 }) });
    await processedBy(db, name('triggers'), [lead.id]);
    const welcomed = (await quiet.owner.get(`/api/v1/automation/rules/${welcome.body.id}/runs?limit=10`)).body.data as Array<{ eventId: string }>;
    expect(welcomed.map((r) => r.eventId)).toEqual([lead.id]);
  });

  it('an event one share fails on is retried for that share alone; the others, and the rest of its batch, commit once', async () => {
    const poisoned = crm.add(orgId, { name: 'Poisoned', tags: ['vip'] });
    const vip = crm.add(orgId, { name: 'Another VIP', tags: ['vip'] });
    failing.add(poisoned.id);
    const retries = await queueProbe.count('retry');
    // Published back to back: one batch of the one lane of this org, which fails and is applied event by event.
    const bad = await bus.publish('message.received', orgId, messageData(poisoned.id, randomUUID(), 'from the poisoned contact'));
    const good = await bus.publish('message.received', orgId, messageData(vip.id, randomUUID(), 'from a good contact'));
    const seen = await bus.publish('message.seen', orgId, seenData());

    // While crm still fails for it: the replies share applied the bad event, the good one and the receipt went through.
    await eventually(async () => (await queueProbe.count('retry')) > retries);
    await processedBy(db, name('campaign-replies'), [bad.id, good.id]);
    await processedBy(db, name('triggers'), [good.id]);
    await processedBy(db, name('campaign-seen'), [seen.id]);
    expect(await runsFor(good.id)).toHaveLength(1);
    expect(await claimedBy(name('triggers'), bad.id)).toEqual([]);
    expect(await runsFor(bad.id)).toHaveLength(0);
    const [replied] = await claimedBy(name('campaign-replies'), bad.id);

    // crm answers again: the retry applies the triggers share only (the replies share's claim stands as it was).
    failing.delete(poisoned.id);
    await processedBy(db, name('triggers'), [bad.id]);
    expect(await runsFor(bad.id)).toHaveLength(1);
    expect(await claimedBy(name('campaign-replies'), bad.id)).toEqual([replied]);
    expect(await runsFor(good.id)).toHaveLength(1);
  });

  it('a read-receipt queue an older version left behind is unbound at start and drained; then no copy reaches it', async () => {
    const exchange = stack.env.EVENTS_EXCHANGE;
    await stack.stopService('automation');
    // As the previous version left things: the receipts on a queue of their own, the triggers queue not bound to them.
    const previous = new EventConsumer({
      amqpUrl: infra.amqpUrl,
      exchange,
      queue: name('campaign-seen'),
      bindings: ['message.seen'],
      logger: createLogger('shared-queue-test', 'silent'),
      batchHandler: async () => undefined,
      maxAttempts: 10,
      retryDelaysMs: [300],
    });
    await previous.start();
    await previous.stop();
    const connection = await connect(infra.amqpUrl);
    const channel = await connection.createConfirmChannel();
    try {
      await channel.unbindQueue(name('triggers'), exchange, 'message.seen');
      const left = await bus.publish('message.seen', orgId, seenData());
      expect((await channel.checkQueue(name('campaign-seen'))).messageCount).toBe(1);

      await stack.startService('automation');
      await processedBy(db, name('campaign-seen'), [left.id]);
      await eventually(async () => (await channel.checkQueue(name('campaign-seen'))).messageCount === 0);
      // From now on a receipt reaches the shared queue only: had the old queue kept its binding, the copy there would be
      // counted before the marker sent straight into it (a queue hands out in order).
      const mark = await seenProbe.mark();
      const next = await bus.publish('message.seen', orgId, seenData());
      await processedBy(db, name('campaign-seen'), [next.id]);
      const marker = { id: randomUUID(), type: 'message.seen', orgId, occurredAt: new Date().toISOString(), data: seenData() };
      channel.sendToQueue(name('campaign-seen'), Buffer.from(JSON.stringify(marker)), {
        persistent: true,
        userId: amqpUser(infra.amqpUrl),
        contentType: 'application/json',
        messageId: marker.id,
      });
      await channel.waitForConfirms();
      await processedBy(db, name('campaign-seen'), [marker.id]);
      await seenProbe.settled(mark, 2);
      expect(await seenProbe.count()).toBe(mark + 2);
    } finally {
      await connection.close();
    }
  });
});
