import { EventConsumer } from '@crm/events';
import type { Logger } from '@crm/logger';
import type { Pool } from '@crm/db';
import { Batcher } from '../db/batcher';
import * as deliveries from '../db/deliveries.repo';
import { isPublicEventType, PUBLIC_EVENT_TYPES } from '../domain/event-types';
import { isUuid } from '../domain/validation';

export interface PublicEventsConsumerOptions {
  amqpUrl: string;
  exchange: string;
  pool: Pool;
  logger: Logger;
}

export const queueName = (exchange: string) => `${exchange}.webhooks.deliveries`;

/**
 * Turns every public event into one delivery row per subscribed, active endpoint of its organization.
 * The queue is bound to the public event types one by one (never `#`), so internal events such as
 * `chatnet.inbound` or `chatnet_account.qr` never even reach this service. The insert is idempotent by
 * (endpoint, event id), so a redelivered message adds nothing; the message is acked only after the rows
 * are committed, so an event is never lost between the broker and the delivery queue.
 */
export function publicEventsConsumer(o: PublicEventsConsumerOptions): EventConsumer {
  // Events handled at the same time are inserted by one statement; each handler (and so each ack) waits
  // for the statement that carries its event. The statement also announces the new rows (NOTIFY at its
  // commit), which is what makes a worker of any instance send them at once.
  const batch = new Batcher<deliveries.FanOutEvent>(async (events) => {
    await deliveries.fanOut(o.pool, events);
  });
  return new EventConsumer({
    amqpUrl: o.amqpUrl,
    exchange: o.exchange,
    queue: queueName(o.exchange),
    bindings: [...PUBLIC_EVENT_TYPES],
    logger: o.logger,
    prefetch: 200,
    // Order across events does not matter for webhooks (Standard Webhooks promises none): fan out in parallel.
    concurrency: 64,
    // Handler failures mean this service's database is unreachable: keep retrying for about half an hour.
    maxAttempts: 30,
    retryDelaysMs: [500, 2_000, 10_000, 60_000],
    handler: async (event) => {
      if (!isPublicEventType(event.type)) return;
      if (!isUuid(event.orgId)) {
        o.logger.warn({ eventId: event.id, type: event.type }, 'webhooks: event without a valid orgId; ignored');
        return;
      }
      const payload = JSON.stringify({ type: event.type, timestamp: event.occurredAt, data: event.data });
      await batch.add({ orgId: event.orgId, eventId: event.id, type: event.type, payload });
    },
  });
}
