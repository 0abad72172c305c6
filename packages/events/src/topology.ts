import type { Channel } from 'amqplib';
import { connectAmqp } from './amqp';

/**
 * Redeliveries of one message (connection loss, crash before ack) after which the quorum queue
 * dead-letters it. RabbitMQ 3.10 has no default, so a message that kills its consumer would loop forever.
 * Handler failures do not count here (they go through the retry queues); this only stops crash loops.
 * It is a constant because the broker refuses to re-declare a queue with a different value.
 */
export const DELIVERY_LIMIT = 20;

export function dlqName(queue: string): string {
  return `${queue}.dlq`;
}

/**
 * One retry queue per attempt level. A queue expires messages only from its head, so a single retry queue
 * holding a 30 s retry in front of a 1 s one would hold the 1 s one for 30 s; within one level every
 * message waits about as long, so nothing queues behind a longer wait.
 */
export function retryQueueName(queue: string, level: number): string {
  return `${queue}.retry.${level}`;
}

const QUORUM = { 'x-queue-type': 'quorum' };
/**
 * Retry and dead-letter queues are classic durable queues: they only hold messages for a while (persistent
 * messages survive a broker restart either way), and each quorum queue is a Raft group of its own. Seven
 * quorum queues per consumer wedged a two-core broker under a test suite's churn; one per consumer does not.
 */
const CLASSIC = { 'x-queue-type': 'classic' };

/**
 * Dead-lettering from a quorum queue is at-most-once unless asked otherwise; at-least-once needs
 * reject-publish overflow (irrelevant here: these queues have no length limit).
 */
function deadLetterTo(queue: string) {
  return {
    'x-dead-letter-exchange': '',
    'x-dead-letter-routing-key': queue,
    'x-dead-letter-strategy': 'at-least-once',
    'x-overflow': 'reject-publish',
  };
}

/** Classic queues support neither the at-least-once strategy nor needs it for a TTL hand-back. */
function retryDeadLetterTo(queue: string) {
  return { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': queue };
}

export async function declareExchange(channel: Channel, exchange: string): Promise<void> {
  await channel.assertExchange(exchange, 'topic', { durable: true });
}

/** Every durable queue this process has declared (with its retry and dead-letter queues), for declaredQueues(). */
const declared = new Set<string>();

/**
 * The durable queues this process has declared whose names start with `prefix`: what a test that ran its services
 * in-process must delete from the shared broker, without asking the broker for a list (rabbitmqctl costs a second
 * of CPU per call).
 */
export function declaredQueues(prefix: string): string[] {
  return [...declared].filter((name) => name.startsWith(prefix));
}

/**
 * The durable queue, its retry levels (each dead-lettering back to the queue through the default exchange,
 * so a retry reaches this consumer only, not every subscriber of the event) and its dead-letter queue.
 */
export async function declareDurableQueue(channel: Channel, queue: string, retryLevels: number): Promise<void> {
  declared.add(dlqName(queue));
  for (let level = 1; level <= retryLevels; level++) declared.add(retryQueueName(queue, level));
  declared.add(queue);
  await channel.assertQueue(dlqName(queue), { durable: true, arguments: CLASSIC });
  for (let level = 1; level <= retryLevels; level++) {
    await channel.assertQueue(retryQueueName(queue, level), { durable: true, arguments: { ...CLASSIC, ...retryDeadLetterTo(queue) } });
  }
  await channel.assertQueue(queue, {
    durable: true,
    arguments: { ...QUORUM, 'x-delivery-limit': DELIVERY_LIMIT, ...deadLetterTo(dlqName(queue)) },
  });
}

/**
 * Delete an exchange and the queues a test created, with their retry and dead-letter queues. Retry levels
 * are numbered from 1 without gaps, so they are probed until one is missing.
 */
export async function deleteTopology(amqpUrl: string, exchange: string, queues: string[]): Promise<void> {
  const connection = await connectAmqp(amqpUrl, 'events delete-topology');
  // A passive declare of a missing queue closes the channel with 404; that error is expected here.
  connection.on('error', () => undefined);
  try {
    let channel = await connection.createChannel();
    channel.on('error', () => undefined);
    for (const queue of queues) {
      await channel.deleteQueue(queue);
      await channel.deleteQueue(dlqName(queue));
      for (let level = 1; ; level++) {
        try {
          await channel.checkQueue(retryQueueName(queue, level));
        } catch {
          channel = await connection.createChannel();
          channel.on('error', () => undefined);
          break;
        }
        await channel.deleteQueue(retryQueueName(queue, level));
      }
    }
    await channel.deleteExchange(exchange);
  } finally {
    await connection.close().catch(() => undefined);
  }
}
