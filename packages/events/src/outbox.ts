import { randomUUID } from 'node:crypto';
import type { Queryable } from '@crm/db';
import type { EventEnvelope } from './envelope';
import { OUTBOX_CHANNEL } from './tables';

export interface NewEvent {
  type: string;
  orgId: string;
  data: unknown;
  /** Give a stable id to make a retried producer step enqueue the event once (a repeated id is ignored). */
  id?: string;
  occurredAt?: string;
}

// One round trip: the insert rides in a CTE of the NOTIFY. PostgreSQL delivers the notification only at
// commit (and never for a rolled-back transaction), so the relay wakes exactly when the row becomes visible.
const ENQUEUE = {
  name: 'crm_events_enqueue',
  text: `WITH inserted AS (
           INSERT INTO outbox (id, type, org_id, occurred_at, data) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (id) DO NOTHING
         )
         SELECT pg_notify('${OUTBOX_CHANNEL}', '')`,
};

// Several events in one statement, in the order given (seq follows the ORDER BY), and one NOTIFY.
const ENQUEUE_MANY = {
  name: 'crm_events_enqueue_many',
  text: `WITH inserted AS (
           INSERT INTO outbox (id, type, org_id, occurred_at, data)
           SELECT id, type, org_id, occurred_at, data
           FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::jsonb[]) WITH ORDINALITY AS e(id, type, org_id, occurred_at, data, ord)
           ORDER BY ord
           ON CONFLICT (id) DO NOTHING
         )
         SELECT pg_notify('${OUTBOX_CHANNEL}', '')`,
};

/** The envelope of a new event, checked the way the broker and consumers need it. */
function toEnvelope(e: NewEvent): EventEnvelope {
  // The type is the routing key: AMQP caps it at 255 bytes, and an empty one could never be bound to.
  if (!e.type || Buffer.byteLength(e.type) > 255) throw new Error(`Invalid event type "${e.type}"`);
  if (!e.orgId) throw new Error('Event orgId is required');
  const occurredAt = new Date(e.occurredAt ?? Date.now());
  if (Number.isNaN(occurredAt.getTime())) throw new Error(`Invalid occurredAt "${e.occurredAt}"`);
  return {
    id: e.id ?? randomUUID(),
    type: e.type,
    orgId: e.orgId,
    occurredAt: occurredAt.toISOString(),
    data: e.data ?? null,
  };
}

/**
 * Record an event in the outbox as part of the caller's transaction (pass the client from
 * withTransaction). It is published after commit by an OutboxRelay; a rollback discards it.
 */
export async function enqueueEvent(db: Queryable, e: NewEvent): Promise<EventEnvelope> {
  const envelope = toEnvelope(e);
  await db.query({
    ...ENQUEUE,
    values: [envelope.id, envelope.type, envelope.orgId, envelope.occurredAt, JSON.stringify(envelope.data)],
  });
  return envelope;
}

/**
 * enqueueEvent for several events in one round trip (a batch consumer's events of one transaction). They
 * get outbox positions in the order given; an id already in the outbox is skipped, as with enqueueEvent.
 */
export async function enqueueEvents(db: Queryable, events: NewEvent[]): Promise<EventEnvelope[]> {
  const envelopes = events.map(toEnvelope);
  if (envelopes.length === 0) return envelopes;
  await db.query({
    ...ENQUEUE_MANY,
    values: [
      envelopes.map((e) => e.id),
      envelopes.map((e) => e.type),
      envelopes.map((e) => e.orgId),
      envelopes.map((e) => e.occurredAt),
      envelopes.map((e) => JSON.stringify(e.data)),
    ],
  });
  return envelopes;
}
