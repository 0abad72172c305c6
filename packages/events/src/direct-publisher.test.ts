import { randomUUID } from 'node:crypto';
import type { GetMessage } from 'amqplib';
import { eventually, freePort, infra } from '@crm/testing';
import { DirectPublisher } from './direct-publisher';
import { enqueueEvent } from './outbox';
import { Harness, log, ORG } from './test-support/harness';
import { offCatalogue } from './test-support/off-catalogue';

let h: Harness;
beforeEach(async () => {
  h = await Harness.create();
});
afterEach(async () => {
  await h.close();
});

async function publisher(amqpUrl = infra.amqpUrl): Promise<DirectPublisher> {
  const p = new DirectPublisher({ amqpUrl, exchange: h.exchange, logger: log, confirmTimeoutMs: 1_000 });
  await p.start();
  return p;
}

test('a direct publish is the message the relay sends for the same event: routing key, properties, headers and envelope', async () => {
  const ch = await h.probe();
  const queue = h.queue();
  await ch.assertExchange(h.exchange, 'topic', { durable: true });
  await ch.assertQueue(queue, { durable: false });
  await ch.bindQueue(queue, h.exchange, '#');
  const event = {
    ...offCatalogue({
      type: 'widget.created',
      orgId: ORG,
      data: { name: 'Lan', tags: ['a', 'b'], nested: { n: 1 } },
      occurredAt: '2026-01-02T03:04:05.678Z',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    }),
    id: randomUUID(),
  };
  await enqueueEvent(h.pool, event);
  await h.relay();
  const direct = await publisher();
  try {
    await direct.publish([event]);
  } finally {
    await direct.stop();
  }
  const got: GetMessage[] = [];
  await eventually(async () => {
    const m = await ch.get(queue, { noAck: true });
    if (m) got.push(m);
    return got.length === 2;
  });
  const [relayed, published] = got;
  expect(published.fields.routingKey).toBe(relayed.fields.routingKey);
  expect(published.properties).toEqual(relayed.properties);
  expect(published.properties).toMatchObject({ deliveryMode: 2, messageId: event.id, headers: { traceparent: event.traceparent } });
  // The envelope is byte for byte the same up to its data, which the relay sends as PostgreSQL prints the stored jsonb.
  const [relayedBody, publishedBody] = [relayed.content.toString(), published.content.toString()];
  const head = (body: string) => body.slice(0, body.indexOf('"data":'));
  expect(head(publishedBody)).toBe(head(relayedBody));
  expect(JSON.parse(publishedBody)).toEqual(JSON.parse(relayedBody));
});

test('with the broker unreachable a publish fails at once, not after the reconnect: the caller falls back', async () => {
  // Nothing listens there: the publisher keeps trying in the background, and publish does not wait for it.
  const direct = await publisher(`amqp://guest:guest@127.0.0.1:${await freePort()}`);
  try {
    expect(direct.connected).toBe(false);
    const started = Date.now();
    await expect(direct.publish([{ ...offCatalogue({ type: 'widget.created', orgId: ORG, data: {} }), id: randomUUID() }])).rejects.toThrow(
      /no usable RabbitMQ channel/,
    );
    expect(Date.now() - started).toBeLessThan(100);
  } finally {
    await direct.stop();
  }
});
