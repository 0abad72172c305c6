import { EventConsumer, eventTraceparent, webhookData } from '@crm/events';
import type { Logger } from '@crm/logger';
import type { Metrics } from '@crm/metrics';
import type { FanOutEvent } from '../db/deliveries.repo';
import type { FeedEvent } from '../db/feed.repo';
import { isPublicEventType, PUBLIC_EVENT_TYPES } from '../domain/event-types';
import { isUuid } from '@crm/validation';

export interface PublicEventsConsumerOptions {
  amqpUrl: string;
  /** AMQP_USER_PREFIX (EventConsumerOptions.amqpUserPrefix). */
  amqpUserPrefix?: string;
  exchange: string;
  /** Inserts a batch's deliveries (the worker's fan-out: it sends at once what it has room for). */
  fanOut(events: (FanOutEvent & FeedEvent)[]): Promise<void>;
  logger: Logger;
  metrics?: Metrics;
}

export const queueName = (exchange: string) => `${exchange}.webhooks.deliveries`;

/**
 * Turns every public event into one delivery row per subscribed, active endpoint of its organization, and appends
 * it to the organization's event feed (with the same body: a feed reader gets the `data` a receiver got).
 * The queue is bound to the public event types one by one (never `#`), so internal events such as
 * `chatnet.inbound` or `chatnet_account.qr` never even reach this service. The fan-out is idempotent by
 * (endpoint, event id), so a redelivered message adds nothing; the message is acked only after the rows
 * are committed, so an event is never lost between the broker and the delivery queue.
 */
export function publicEventsConsumer(o: PublicEventsConsumerOptions): EventConsumer {
  return new EventConsumer({
    amqpUrl: o.amqpUrl,
    amqpUserPrefix: o.amqpUserPrefix,
    exchange: o.exchange,
    queue: queueName(o.exchange),
    bindings: [...PUBLIC_EVENT_TYPES],
    logger: o.logger,
    metrics: o.metrics,
    // Batch mode without a pool: the fan-out is itself idempotent (an endpoint's delivery of an event is planned only
    // when it has none, and written under the unique (endpoint, event id)), so there is no processed_events claim. Up
    // to 200 events a batch: what this instance has room for is sent at once and written after, the rest announced
    // (NOTIFY at its commit) to a worker of any instance (DeliveryWorker.fanOut). One ack per batch, after the commit.
    batchSize: 200,
    // Handler failures mean this service's database is unreachable: keep retrying for about half an hour.
    maxAttempts: 30,
    retryDelaysMs: [500, 2_000, 10_000, 60_000],
    // Each event's data is parsed by its schema on arrival: one that does not fit is dead-lettered with the reason,
    // never delivered half-formed to a customer's endpoint.
    parseData: true,
    batchHandler: async (events) => {
      const rows: (FanOutEvent & FeedEvent)[] = [];
      for (const event of events) {
        if (!isPublicEventType(event.type)) continue;
        if (!isUuid(event.orgId)) {
          o.logger.warn({ eventId: event.id, type: event.type }, 'webhooks: event without a valid orgId; ignored');
          continue;
        }
        rows.push({
          orgId: event.orgId,
          eventId: event.id,
          type: event.type,
          occurredAt: event.occurredAt,
          // The public shapes (a contact as the public REST API shows it), not the internal ones the bus carries.
          payload: JSON.stringify({ type: event.type, timestamp: event.occurredAt, data: webhookData(event.type, event.version ?? 1, event.data) }),
          // Each row keeps its own event's trace (events of a batch may come from different requests).
          traceparent: eventTraceparent(event) ?? null,
        });
      }
      if (rows.length > 0) await o.fanOut(rows);
    },
  });
}
