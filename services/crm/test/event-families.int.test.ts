import { randomUUID } from 'node:crypto';
import path from 'node:path';
import amqp from 'amqplib';
import { migrate, Pool, withTransaction } from '@crm/db';
import {
  amqpUser,
  deleteTopology,
  dlqName,
  EVENT_EXAMPLES,
  EventConsumer,
  exampleContact,
  installEventTables,
  type EventEnvelope,
} from '@crm/events';
import { createLogger } from '@crm/logger';
import { createTestDatabase, eventually, infra, TestDatabase, uniqueName, testPool } from '@crm/testing';
import { messageActivity } from '../src/activity';
import { analyticsEvents } from '../src/analytics/analytics.consumer';
import { joinModules } from '../src/events/event-families';
import { messageFamilyConsumer } from '../src/events/message-family.consumer';
import { DEFAULT_CONFIG } from '../src/scoring/model';
import { scoreEvents } from '../src/scoring/scoring.consumer';
import * as scoringRepo from '../src/scoring/scoring.repo';
import { UsedConditions } from '../src/scoring/used-conditions';

// crm's event families against real PostgreSQL and RabbitMQ: one consumer applies a message's activity, lead
// scoring facts and analytics in one transaction (one processed_events row); the module functions give the
// same result for a batch as for its events one by one; scoring records only facts some rule can count.
const log = createLogger('test', 'silent');
const HOUR = 3_600_000;

async function migratedDatabase(prefix: string): Promise<{ db: TestDatabase; pool: Pool }> {
  const db = await createTestDatabase(prefix);
  const pool = testPool(db.url, 4);
  await migrate(pool, path.join(__dirname, '..', 'migrations'));
  await installEventTables(pool);
  return { db, pool };
}

/** The modules as app.ts joins them, with the used-conditions cache off unless given. */
function families(conditions = new UsedConditions(0)) {
  const scoring = scoreEvents(conditions, log);
  const analytics = analyticsEvents(log);
  return {
    message: joinModules([messageActivity(log), scoring, analytics]),
    contact: joinModules([scoring, analytics]),
  };
}

let seq = 0;
const envelope = (type: string, orgId: string, data: Record<string, unknown>, occurredAt = new Date()): EventEnvelope => ({
  id: randomUUID(),
  type,
  orgId,
  // Distinct times, so the order of contact snapshots is the order they were made in.
  occurredAt: new Date(occurredAt.getTime() + seq++).toISOString(),
  data,
});
/** A message event as messaging publishes it (the consumer parses data by its schema), with the fields a test sets. */
const messageExample = (type: 'message.received' | 'message.sent') => EVENT_EXAMPLES[type] as Record<string, unknown>;
const appointmentExample = (EVENT_EXAMPLES['appointment.created'] as { appointment: Record<string, unknown> }).appointment;
const received = (orgId: string, contactId: string, conversationId: string, sentAt: Date, messageId = randomUUID()) =>
  envelope('message.received', orgId, {
    ...messageExample('message.received'),
    messageId,
    conversationId,
    contactId,
    content: 'hello',
    contentType: 'text',
    sentAt: sentAt.toISOString(),
    threadType: 'user',
  });
const replied = (orgId: string, contactId: string, conversationId: string, sentAt: Date, userId: string) =>
  envelope('message.sent', orgId, {
    ...messageExample('message.sent'),
    messageId: randomUUID(),
    conversationId,
    contactId,
    content: 'hi',
    contentType: 'text',
    sentAt: sentAt.toISOString(),
    sentByUserId: userId,
    source: 'ui',
    threadType: 'user',
  });

async function newOrg(pool: Pool, orgId: string, conditions: string[]) {
  await scoringRepo.saveConfig(pool, orgId, { ...DEFAULT_CONFIG, decayRate: 0 });
  for (const c of conditions)
    await scoringRepo.insertRule(pool, randomUUID(), orgId, { name: c, condition: c as never, value: '', points: 3, weight: 1 });
}
const newContact = (pool: Pool, orgId: string, id = randomUUID()) =>
  pool.query(`INSERT INTO contacts (id, org_id, name, last_activity) VALUES ($1, $2, 'x', '2020-01-01') RETURNING id`, [id, orgId]).then(() => id);
const count = async (pool: Pool, sql: string, values: unknown[]) =>
  (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, values)).rows[0].n;

describe('one consumer per event family', () => {
  let db: TestDatabase;
  let pool: Pool;
  const exchange = uniqueName('crm_families');
  const config = { AMQP_URL: infra.amqpUrl, EVENTS_EXCHANGE: exchange };
  const queue = `${exchange}.crm.message-events`;
  const consumers: EventConsumer[] = [];
  let conn: amqp.ChannelModel;

  beforeAll(async () => {
    ({ db, pool } = await migratedDatabase('crm_families'));
    conn = await amqp.connect(infra.amqpUrl);
  });
  afterAll(async () => {
    for (const c of consumers) await c.stop();
    await conn?.close();
    await deleteTopology(infra.amqpUrl, exchange, [queue]).catch(() => undefined);
    await pool.end();
    await db.drop();
  });

  const publish = async (e: EventEnvelope) => {
    const ch = await conn.createConfirmChannel();
    ch.publish(exchange, e.type, Buffer.from(JSON.stringify(e)), { persistent: true, userId: amqpUser(infra.amqpUrl), messageId: e.id });
    await ch.waitForConfirms();
    await ch.close();
  };

  it('a message event gives activity, a scoring fact and analytics in one transaction with one processed_events row; a redelivery changes nothing', async () => {
    const message = messageFamilyConsumer(
      { config, pool, log },
      { activity: messageActivity(log), scoring: scoreEvents(new UsedConditions(0), log), analytics: analyticsEvents(log) },
    );
    consumers.push(message);
    await message.start();
    const orgId = randomUUID();
    await newOrg(pool, orgId, ['message_received']);
    const contactId = await newContact(pool, orgId);
    const sentAt = new Date(Date.now() - 60_000);
    const event = received(orgId, contactId, randomUUID(), sentAt);
    const skipped = jest.spyOn(log, 'debug');

    await publish(event);
    await eventually(async () => (await count(pool, 'analytics_items WHERE org_id = $1', [orgId])) === 1);
    const contact = (await pool.query('SELECT last_activity, lead_score FROM contacts WHERE id = $1', [contactId])).rows[0];
    expect(contact).toEqual({ last_activity: sentAt, lead_score: 3 });
    expect((await pool.query('SELECT type, data FROM contact_activities WHERE contact_id = $1', [contactId])).rows).toEqual([
      { type: 'message_received', data: 'hello' },
    ]);
    expect((await pool.query('SELECT condition, occurrences FROM contact_score_facts WHERE contact_id = $1', [contactId])).rows).toEqual([
      { condition: 'message_received', occurrences: 1 },
    ]);
    expect((await pool.query('SELECT consumer FROM processed_events WHERE event_id = $1', [event.id])).rows).toEqual([{ consumer: queue }]);

    // The same event again (a publisher's retry): claimed already, so nothing is applied a second time.
    await publish(event);
    await eventually(async () =>
      skipped.mock.calls.some(
        ([ctx, msg]) => msg === 'event consumer: already processed; skipping' && ((ctx as { eventIds?: string[] }).eventIds ?? []).includes(event.id),
      ),
    );
    expect(await count(pool, 'contact_activities WHERE contact_id = $1', [contactId])).toBe(1);
    expect((await pool.query('SELECT occurrences FROM contact_score_facts WHERE contact_id = $1', [contactId])).rows).toEqual([{ occurrences: 1 }]);
    expect(await count(pool, 'analytics_items WHERE org_id = $1', [orgId])).toBe(1);
    expect(await count(pool, 'processed_events WHERE event_id = $1', [event.id])).toBe(1);
    skipped.mockRestore();
  });

  it('a message event whose data does not fit its schema is dead-lettered with the fields named, and applies nothing', async () => {
    const message = messageFamilyConsumer(
      { config, pool, log },
      { activity: messageActivity(log), scoring: scoreEvents(new UsedConditions(0), log), analytics: analyticsEvents(log) },
    );
    consumers.push(message);
    await message.start();
    const orgId = randomUUID();
    await newOrg(pool, orgId, ['message_received']);
    const contactId = await newContact(pool, orgId);
    // An older producer's message.received: no sentAt, a contentType that is not a string.
    const { sentAt: _missing, ...withoutSentAt } = received(orgId, contactId, randomUUID(), new Date()).data as Record<string, unknown>;
    const bad = envelope('message.received', orgId, { ...withoutSentAt, contentType: 7 });
    const good = received(orgId, contactId, randomUUID(), new Date(Date.now() - 60_000));

    await publish(bad);
    await publish(good);
    const ch = await conn.createChannel();
    const parked = await eventually(() => ch.get(dlqName(queue), { noAck: true }));
    await ch.close();
    expect(JSON.parse(parked.content.toString()).id).toBe(bad.id);
    expect(parked.properties.headers).toMatchObject({
      'x-crm-attempt': 1,
      'x-crm-error':
        'message.received v1 data does not match its schema: contentType: Invalid input: expected string, received number; sentAt: Invalid input: expected string, received undefined',
    });
    // The good one behind it was applied; the bad one left no trace (no activity, fact or claim of its own).
    await eventually(async () => (await count(pool, 'contact_activities WHERE contact_id = $1', [contactId])) === 1);
    expect(await count(pool, 'contact_score_facts WHERE contact_id = $1', [contactId])).toBe(1);
    expect(await count(pool, 'processed_events WHERE event_id = $1', [bad.id])).toBe(0);
  });

  it('scoring records facts only for conditions some rule of the org uses; a rule change here is seen at once', async () => {
    const conditions = new UsedConditions(60_000);
    const f = families(conditions);
    const orgId = randomUUID();
    await newOrg(pool, orgId, ['contact_created']);
    const contactId = await newContact(pool, orgId);
    const facts = () =>
      pool.query('SELECT condition, occurrences FROM contact_score_facts WHERE contact_id = $1 ORDER BY condition', [contactId]).then((r) => r.rows);
    const deliver = (e: EventEnvelope) => withTransaction(pool, (tx) => f.message([e], tx));

    await deliver(received(orgId, contactId, randomUUID(), new Date()));
    expect(await facts()).toEqual([]);
    // The message still made its activity: only scoring skipped it.
    expect(await count(pool, 'contact_activities WHERE contact_id = $1', [contactId])).toBe(1);

    await scoringRepo.insertRule(pool, randomUUID(), orgId, { name: 'Writes', condition: 'message_received', value: '', points: 5, weight: 1 });
    // Cached for up to the TTL (a write through another replica is seen that late)...
    await deliver(received(orgId, contactId, randomUUID(), new Date()));
    expect(await facts()).toEqual([]);
    // ...and at once when this process made the change (the scoring service clears the cache after its commit).
    conditions.clear();
    await deliver(received(orgId, contactId, randomUUID(), new Date()));
    expect(await facts()).toEqual([{ condition: 'message_received', occurrences: 1 }]);
    expect((await pool.query('SELECT lead_score FROM contacts WHERE id = $1', [contactId])).rows[0].lead_score).toBe(5);
  });

  it('concurrent batches over the same contacts and conversations, in different orders, wait for each other instead of deadlocking', async () => {
    const f = families();
    const orgs = [randomUUID(), randomUUID()];
    const people: { orgId: string; contactId: string; conversationId: string }[] = [];
    for (const orgId of orgs) {
      await newOrg(pool, orgId, ['message_received', 'message_replied']);
      for (let i = 0; i < 3; i++) people.push({ orgId, contactId: await newContact(pool, orgId), conversationId: randomUUID() });
    }
    const agent = randomUUID();
    const t0 = Date.now() - HOUR;
    // Each batch: a message and a reply for every contact, the contacts in a different order per batch.
    const batches = Array.from({ length: 8 }, (_, b) => {
      const order = b % 2 ? [...people].reverse() : [...people.slice(b % people.length), ...people.slice(0, b % people.length)];
      return order.flatMap((p, i) => [
        received(p.orgId, p.contactId, p.conversationId, new Date(t0 + (b * 10 + i) * 1000)),
        replied(p.orgId, p.contactId, p.conversationId, new Date(t0 + (b * 10 + i) * 1000 + 500), agent),
      ]);
    });
    await Promise.all(batches.map((events) => withTransaction(pool, (tx) => f.message(events, tx))));
    for (const p of people) {
      expect(await count(pool, 'contact_activities WHERE contact_id = $1', [p.contactId])).toBe(16);
      expect((await pool.query('SELECT lead_score FROM contacts WHERE id = $1', [p.contactId])).rows[0].lead_score).toBe(48);
    }
    const replies = await pool.query(`SELECT sum(replies)::int AS n FROM analytics_user_stats WHERE org_id = ANY($1::uuid[]) AND unit = 'd'`, [orgs]);
    expect(replies.rows[0].n).toBe(48);
  });
});

describe('a batch through the module functions gives what its events give one by one', () => {
  let one: { db: TestDatabase; pool: Pool };
  let batch: { db: TestDatabase; pool: Pool };
  beforeAll(async () => {
    [one, batch] = await Promise.all([migratedDatabase('crm_fam_one'), migratedDatabase('crm_fam_batch')]);
  });
  afterAll(async () => {
    for (const x of [one, batch]) {
      await x?.pool.end();
      await x?.db.drop();
    }
  });

  /** Everything the modules derive, without generated ids and times of handling. */
  async function state(pool: Pool) {
    const q = async (sql: string) => (await pool.query(sql)).rows;
    return {
      contacts: await q('SELECT id, org_id, last_activity, lead_score FROM contacts ORDER BY id'),
      activities: await q('SELECT org_id, contact_id, type, data, occurred_at FROM contact_activities ORDER BY contact_id, id'),
      facts: await q('SELECT org_id, contact_id, condition, value, bucket, occurrences, last_at FROM contact_score_facts ORDER BY 1, 2, 3, 4, 5'),
      scoreState: await q('SELECT contact_id, tags, tags_as_of, contrib FROM contact_score_state ORDER BY contact_id'),
      items: await q('SELECT * FROM analytics_items ORDER BY org_id, item_id'),
      conversations: await q('SELECT * FROM analytics_conversations ORDER BY org_id, conversation_id'),
      durations: await q(
        'SELECT org_id, conversation_id, kind, first, started_at, ended_at, ms, bucket, user_id FROM analytics_durations ORDER BY 1, 2, 5, 3',
      ),
      histogram: await q('SELECT * FROM analytics_histogram WHERE n <> 0 OR sum_ms <> 0 ORDER BY org_id, unit, start, series, bucket'),
      users: await q('SELECT * FROM analytics_user_stats ORDER BY org_id, unit, start, user_id'),
      analyticsContacts: await q('SELECT * FROM analytics_contacts ORDER BY org_id, contact_id'),
      funnel: await q('SELECT * FROM analytics_funnel_days WHERE n <> 0 ORDER BY org_id, day, reached_lead, reached_customer, reached_status_ids'),
      assignments: await q('SELECT * FROM analytics_assignments ORDER BY org_id, contact_id, user_id'),
    };
  }

  it('several contacts, conversations and orgs, late and repeated messages, tags, statuses, assignments and deletes', async () => {
    const [orgA, orgB] = [randomUUID(), randomUUID()];
    const [c1, c2, c3, gone] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const [v1, v2, v3] = [randomUUID(), randomUUID(), randomUUID()];
    const [agent, lead] = [randomUUID(), randomUUID()];
    for (const { pool } of [one, batch]) {
      await newOrg(pool, orgA, ['message_received', 'message_replied', 'tag_added', 'status_changed', 'contact_created', 'appointment_created']);
      await newOrg(pool, orgB, ['message_received']);
      await newContact(pool, orgA, c1);
      await newContact(pool, orgA, c2);
      await newContact(pool, orgB, c3);
      await newContact(pool, orgA, gone);
    }
    const t0 = new Date(Date.now() - 5 * HOUR);
    const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);
    const snapshot = (id: string, fields: Record<string, unknown>) => ({
      ...exampleContact,
      id,
      status: 'new',
      statusId: null,
      assignedUserId: null,
      dealValue: 0,
      tags: [],
      createdAt: t0.toISOString(),
      updatedAt: new Date().toISOString(),
      ...fields,
    });
    const contactEvents = [
      envelope('contact.created', orgA, { contact: snapshot(c1, { tags: ['VIP'], assignedUserId: agent }) }),
      envelope('contact.created', orgA, { contact: snapshot(c2, {}) }),
      envelope('contact.created', orgB, { contact: snapshot(c3, { status: 'lead' }) }),
      envelope('contact.updated', orgA, { contact: snapshot(c1, { tags: ['VIP', 'hot'], assignedUserId: agent }), changes: ['tags'] }),
      envelope('contact.updated', orgA, {
        contact: snapshot(c1, { tags: ['VIP', 'hot'], status: 'customer', assignedUserId: lead, dealValue: 120 }),
        changes: ['status', 'assignedUserId', 'dealValue'],
      }),
      envelope('contact.updated', orgA, { contact: snapshot(c2, { tags: ['hot'] }), changes: ['tags'] }),
      envelope('appointment.created', orgA, { appointment: { ...appointmentExample, contactId: c2, createdAt: at(1).toISOString() } }),
      envelope('contact.created', orgA, { contact: snapshot(gone, { assignedUserId: agent }) }),
      envelope('contact.deleted', orgA, { id: gone }),
    ];
    const repeated = randomUUID();
    const messageEvents = [
      received(orgA, c1, v1, at(0)),
      received(orgA, c1, v1, at(2)),
      replied(orgA, c1, v1, at(7), agent),
      received(orgA, c2, v2, at(3), repeated),
      received(orgB, c3, v3, at(4)),
      replied(orgA, c2, v2, at(9), lead),
      // The same message reported twice (a new event id), and one that arrives after a later reply.
      received(orgA, c2, v2, at(3), repeated),
      received(orgA, c1, v1, at(5)),
      envelope('conversation.archived', orgA, { id: v1 }, at(30)),
      received(orgA, c1, v1, at(40)),
      // Another org's contact and an unknown one: no activity, no score.
      received(orgB, c1, v3, at(6)),
      received(orgA, randomUUID(), v2, at(8)),
    ];

    const f1 = families();
    for (const e of contactEvents) await withTransaction(one.pool, (tx) => f1.contact([e], tx));
    for (const e of messageEvents) await withTransaction(one.pool, (tx) => f1.message([e], tx));
    const f2 = families();
    await withTransaction(batch.pool, (tx) => f2.contact(contactEvents, tx));
    await withTransaction(batch.pool, (tx) => f2.message(messageEvents, tx));

    const expected = await state(one.pool);
    expect(await state(batch.pool)).toEqual(expected);
    // And the scenario did exercise every part (a comparison of two empty results proves nothing).
    expect(expected.activities.length).toBe(9);
    expect(expected.durations.length).toBeGreaterThanOrEqual(3);
    expect(expected.facts.length).toBeGreaterThan(5);
    expect(expected.contacts.find((c) => c.id === c1)!.lead_score).toBeGreaterThan(0);
    expect(expected.assignments.length).toBeGreaterThanOrEqual(2);
    expect(expected.analyticsContacts.find((c) => c.contact_id === gone)!.deleted).toBe(true);
  });
});
