import type { ChannelModel } from 'amqplib';
import { eventually } from '@crm/testing';
import { brokerConnected } from './readiness';
import { Harness } from './test-support/harness';

let h: Harness;
beforeEach(async () => {
  h = await Harness.create();
});
afterEach(async () => {
  await h.close();
});

// A service's RabbitMQ readiness: every relay and consumer it runs holds an open channel.
test('is met while the relay and the consumer are connected, and names how many are not once one stops', async () => {
  const relay = await h.relay();
  const consumer = await h.consumer({ queue: h.queue(), handler: async () => undefined });
  await expect(brokerConnected([relay, consumer])).resolves.toBeUndefined();
  await consumer.stop();
  await expect(brokerConnected([relay, consumer])).rejects.toThrow('1 of 2 RabbitMQ connections are not open');
});

test('a consumer whose connection is lost reads as not connected until it has reconnected', async () => {
  const consumer = await h.consumer({ queue: h.queue(), handler: async () => undefined });
  const connection = (consumer as unknown as { connection: ChannelModel }).connection;
  // The consumer's own 'close' listener was added first, so it has run when this one does; its reconnect waits on a timer.
  const seenOnClose = new Promise<boolean>((resolve) => connection.once('close', () => resolve(consumer.connected)));
  await connection.close();
  expect(await seenOnClose).toBe(false);
  await eventually(async () => consumer.connected, 10_000);
  await expect(brokerConnected([consumer])).resolves.toBeUndefined();
});
