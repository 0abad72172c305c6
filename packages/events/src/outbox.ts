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

/**
 * Record an event in the outbox as part of the caller's transaction (pass the client from
 * withTransaction). It is published after commit by an OutboxRelay; a rollback discards it.
 */
export async function enqueueEvent(db: Queryable, e: NewEvent): Promise<EventEnvelope> {
  // The type is the routing key: AMQP caps it at 255 bytes, and an empty one could never be bound to.
  if (!e.type || Buffer.byteLength(e.type) > 255) throw new Error(`Invalid event type "${e.type}"`);
  if (!e.orgId) throw new Error('Event orgId is required');
  const occurredAt = new Date(e.occurredAt ?? Date.now());
  if (Number.isNaN(occurredAt.getTime())) throw new Error(`Invalid occurredAt "${e.occurredAt}"`);
  const envelope: EventEnvelope = {
    id: e.id ?? randomUUID(),
    type: e.type,
    orgId: e.orgId,
    occurredAt: occurredAt.toISOString(),
    data: e.data ?? null,
  };
  await db.query({
    ...ENQUEUE,
    values: [envelope.id, envelope.type, envelope.orgId, envelope.occurredAt, JSON.stringify(envelope.data)],
  });
  return envelope;
}
