import type { ConfirmChannel, ConsumeMessage, Options } from 'amqplib';
import { createLogger } from '@crm/logger';
import type { EventEnvelope } from './envelope';
import { RefusedPublisherError } from './publishers';
import { attemptOf, DeliverySettler, type SettlerOptions } from './settle';

/** The retry and dead-letter policy against a channel that records what it is asked to do; the broker confirms unless told. */
const log = createLogger('settle-test', 'silent');
const event = { id: '7d0f6a1e-3b8c-4a55-9d1e-2f0c6b1a9e01', type: 'widget.updated', orgId: 'o', occurredAt: '', data: {} } as EventEnvelope;

function delivery(headers: Record<string, unknown> = {}, nack = false) {
  const published: Array<{ queue: string; options: Options.Publish }> = [];
  const acked: ConsumeMessage[] = [];
  const channel = {
    publish: (_exchange: string, queue: string, _content: Buffer, options: Options.Publish, confirmed: (err: unknown) => void) => {
      published.push({ queue, options });
      confirmed(nack ? new Error('nacked') : null);
      return true;
    },
    ack: (m: ConsumeMessage) => void acked.push(m),
  } as unknown as ConfirmChannel;
  const msg = {
    content: Buffer.from('{}'),
    fields: { deliveryTag: 1, routingKey: 'widget.updated' },
    properties: { headers },
  } as unknown as ConsumeMessage;
  return { d: { channel, msg }, published, acked };
}

const settler = (o: Partial<SettlerOptions> = {}) =>
  new DeliverySettler({ queue: 'q', log, ownUser: 'svc', exclusive: false, maxAttempts: 4, retryDelaysMs: [100, 500], ...o });

test('a failed first attempt goes to the first retry queue with its delay, the attempt counted on, broker headers dropped; then the original is acked', async () => {
  const { d, published, acked } = delivery({ 'x-death': [{}], traceparent: 'tp' });
  await settler().failed(d, event, 1, new Error('boom'));
  expect(published).toEqual([
    {
      queue: 'q.retry.1',
      options: expect.objectContaining({
        expiration: '100',
        userId: 'svc',
        headers: { traceparent: 'tp', 'x-crm-attempt': 2, 'x-crm-error': 'boom' },
      }),
    },
  ]);
  expect(acked).toEqual([d.msg]);
  expect(attemptOf(d.msg)).toBe(1);
});

test('later attempts use the last delay; the last attempt is dead-lettered without a delay', async () => {
  const third = delivery({ 'x-crm-attempt': 3 });
  await settler().failed(third.d, event, attemptOf(third.d.msg), new Error('again'));
  expect(third.published.map((p) => [p.queue, p.options.expiration])).toEqual([['q.retry.2', '500']]);

  const last = delivery({ 'x-crm-attempt': 4 });
  await settler().failed(last.d, event, attemptOf(last.d.msg), new Error('for good'));
  expect(last.published.map((p) => [p.queue, p.options.expiration])).toEqual([['q.dlq', undefined]]);
  expect(last.acked).toHaveLength(1);
});

test('a copy the broker did not confirm leaves the original unacked, to be redelivered', async () => {
  const { d, acked } = delivery({}, true);
  await settler().failed(d, event, 1, new Error('boom'));
  expect(acked).toEqual([]);
});

test('an exclusive queue drops what failed: acked, nothing published', async () => {
  const { d, published, acked } = delivery();
  await settler({ exclusive: true }).failed(d, event, 1, new Error('boom'));
  expect(published).toEqual([]);
  expect(acked).toEqual([d.msg]);
  expect(settler({ exclusive: true }).retryLevels).toBe(0);
});

test('a malformed body and a refused publisher go to the DLQ at once, the refusal with its reason', async () => {
  const malformed = delivery();
  await settler().malformed(malformed.d, 1, new Error('not json'));
  expect(malformed.published.map((p) => p.queue)).toEqual(['q.dlq']);

  const refused = delivery();
  await settler().malformed(refused.d, 1, new RefusedPublisherError('publisher ai is not a producer of widget.updated'));
  expect(refused.published).toEqual([
    {
      queue: 'q.dlq',
      options: expect.objectContaining({
        headers: expect.objectContaining({ 'x-refused-reason': 'publisher ai is not a producer of widget.updated' }),
      }),
    },
  ]);
});
