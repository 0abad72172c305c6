import { randomUUID } from 'node:crypto';
import type { GetMessage } from 'amqplib';
import { Metrics, sampleValue } from '@crm/metrics';
import { eventually } from '@crm/testing';
import type { EventEnvelope } from './envelope';
import { dlqName } from './topology';
import { Harness, ORG, OWN_USER } from './test-support/harness';

/**
 * Every publish carries its connection's user as user_id, and a consumer handles only events whose user_id is one of
 * the type's producers or its own user (publishers.ts). Here every process is the one test user, so what is left to see
 * is a publish without user_id: the broker takes it, the consumer refuses it. Other users: tests/security/broker-producers.
 */
let h: Harness;
beforeEach(async () => {
  h = await Harness.create();
});
afterEach(async () => {
  await h.close();
});

const envelope = (type: string): EventEnvelope => ({ id: randomUUID(), type, orgId: ORG, occurredAt: new Date().toISOString(), data: { n: 1 } });

/** Publish as this test's connection, with the user_id given (none: the property is left out). */
async function publish(e: EventEnvelope, userId?: string): Promise<void> {
  const ch = await h.probe();
  ch.publish(h.exchange, e.type, Buffer.from(JSON.stringify(e)), { persistent: true, ...(userId === undefined ? {} : { userId }) });
}

const consumed = async (metrics: Metrics, queue: string, outcome: string) =>
  sampleValue(await metrics.scrape(), 'amqp_messages_consumed_total', { queue, outcome });

test("the relay stamps every message with its connection's user", async () => {
  const ch = await h.probe();
  await ch.assertExchange(h.exchange, 'topic', { durable: true });
  const { queue } = await ch.assertQueue('', { exclusive: true });
  await ch.bindQueue(queue, h.exchange, '#');
  await h.relay();
  await h.emit('widget.created');
  const msg = await eventually(() => ch.get(queue, { noAck: true }));
  expect(msg.properties.userId).toBe(OWN_USER);
});

test("the broker refuses a user_id that is not the connection's own: user_id names the publisher truly", async () => {
  const ch = await h.probe();
  await ch.assertExchange(h.exchange, 'topic', { durable: true });
  const closed = new Promise<Error>((resolve) => ch.once('error', resolve));
  ch.publish(h.exchange, 'message.received', Buffer.from(JSON.stringify(envelope('message.received'))), { userId: `${OWN_USER}-not` });
  expect((await closed).message).toMatch(/PRECONDITION_FAILED.*user_id/);
});

describe.each([
  ['per event', false],
  ['batch mode', true],
])('a consumer (%s)', (_, batch) => {
  it('dead-letters an event without user_id with the reason, never handles it, and counts it', async () => {
    const metrics = new Metrics('events-test', { processMetrics: false });
    const queue = h.queue();
    const seen: string[] = [];
    const record = async (e: EventEnvelope) => void seen.push(e.id);
    await h.consumer({
      queue,
      bindings: ['widget.*'],
      metrics,
      ...(batch ? { batchHandler: async (events: EventEnvelope[]) => void (await Promise.all(events.map(record))) } : { handler: record }),
    });
    const anonymous = envelope('widget.created');
    const own = envelope('widget.created');
    await publish(anonymous);
    await publish(own, OWN_USER);

    const ch = await h.probe();
    const parked: GetMessage = await eventually(() => ch.get(dlqName(queue), { noAck: true }));
    expect(JSON.parse(parked.content.toString()).id).toBe(anonymous.id);
    const reason = 'a message without user_id has no verified publisher; refused as widget.created';
    expect(parked.properties.headers).toMatchObject({ 'x-refused-reason': reason, 'x-crm-error': reason, 'x-crm-attempt': 1 });
    await eventually(async () => seen.includes(own.id));
    await eventually(async () => (await consumed(metrics, queue, 'refused')) === 1);
    expect(seen).toEqual([own.id]);
    expect(await consumed(metrics, queue, 'dead')).toBeUndefined(); // never counted as a failure of its own
  });
});

test('an exclusive consumer drops an event without user_id and counts it refused', async () => {
  const metrics = new Metrics('events-test', { processMetrics: false });
  const seen: string[] = [];
  const queue = h.queue();
  await h.consumer({ queue, exclusive: true, bindings: ['notice.*'], metrics, handler: async (e) => void seen.push(e.id) });
  const anonymous = envelope('notice.posted');
  const own = envelope('notice.posted');
  await publish(anonymous);
  await publish(own, OWN_USER);
  await eventually(async () => seen.includes(own.id) && (await consumed(metrics, queue, 'refused')) === 1);
  expect(seen).toEqual([own.id]);
});
