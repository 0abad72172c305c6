import type { Counter, Gauge, Histogram } from 'prom-client';
import type { Metrics } from './metrics';

/**
 * The instruments the shared packages record (grpc-kit, events) and the gateway's HTTP histogram, named once here
 * so the dashboard (deploy/grafana/crm-dashboard.json) and the README can rely on them. Service-specific ones
 * (webhook deliveries, connector sessions, rate-limit rejections) are declared by their service.
 */
export const httpServerDuration = (m: Metrics): Histogram<'method' | 'route' | 'status'> =>
  m.histogram('http_server_duration_seconds', 'HTTP requests by route template (never a raw path) and status', ['method', 'route', 'status']);

export const grpcServerDuration = (m: Metrics): Histogram<'grpc_service' | 'grpc_method' | 'grpc_code'> =>
  m.histogram('grpc_server_duration_seconds', 'Unary gRPC calls handled, by service, method and status code name', [
    'grpc_service',
    'grpc_method',
    'grpc_code',
  ]);

export const amqpPublished = (m: Metrics): Counter<'type'> =>
  m.counter('amqp_messages_published_total', 'Outbox events the broker confirmed, by event type', ['type']);

export const amqpConsumed = (m: Metrics): Counter<'queue' | 'outcome'> =>
  m.counter(
    'amqp_messages_consumed_total',
    "Deliveries settled by a consumer: ack (applied or duplicate), retry, dead (DLQ), dropped (exclusive queue) or refused (a publisher that is not the type's producer; DLQ)",
    ['queue', 'outcome'],
  );

export const amqpQueueReady = (m: Metrics): Gauge<'queue'> =>
  m.gauge('amqp_queue_messages_ready', 'Messages waiting in a consumer queue (its lag), read from the broker at scrape time', ['queue']);

export const outboxBacklog = (m: Metrics): Gauge => m.gauge('outbox_backlog_rows', 'Outbox rows not yet published, read at scrape time');

export const outboxOldestAge = (m: Metrics): Gauge =>
  m.gauge('outbox_oldest_unsent_age_seconds', 'Age of the oldest unpublished outbox row (0 when none), read at scrape time');
