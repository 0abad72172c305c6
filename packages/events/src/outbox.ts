import { randomUUID } from 'node:crypto';
import type { Queryable } from '@crm/db';
import type { EventEnvelope } from './envelope';
import type { EventToSend } from './message';
import { checkProducedData, currentVersion, type EventData, type EventType } from './schemas';
import { OUTBOX_CHANNEL } from './tables';
import { traceparentOf, validTraceparent } from './trace-context';

/** What an event to publish carries beside its type and data. */
interface EventFields {
  orgId: string;
  /** The schema version `data` follows; the type's newest by default. */
  version?: number;
  /** Give a stable id to make a retried producer step enqueue the event once (a repeated id is ignored). */
  id?: string;
  occurredAt?: string;
  /**
   * W3C trace context the event continues. By default the active span's (the gRPC handler or consumed event
   * that enqueues it), so the consumers' spans join the producer's trace; give it for work done for several
   * events at once (a batch handler, see withEventTrace / eventTraceparent).
   */
  traceparent?: string;
}

/**
 * An event to publish: a type of the catalogue (schemas/) and the data its schema takes. Without a type argument it
 * is the union of every type's pair, so an object literal is checked against the schema of the type it names; the
 * data is checked at run time as well: enqueueEvent(s) refuse data that does not fit, before any query.
 */
export type NewEvent<T extends EventType = EventType> = T extends EventType ? EventFields & { type: T; data: EventData<T> } : never;

/** Any NewEvent, whatever its type parameter. */
type EventInput = EventFields & { type: string; data: unknown };

/** What the outbox row gets beside the envelope. */
interface Outgoing {
  envelope: EventEnvelope & { version: number };
  traceparent: string | null;
}

// One round trip: the insert rides in a CTE of the NOTIFY. PostgreSQL delivers the notification only at
// commit (and never for a rolled-back transaction), so the relay wakes exactly when the row becomes visible. The
// payload is the lowest seq inserted: the relay claims from there (OutboxRelay.floor); nothing inserted, no NOTIFY.
const ENQUEUE = {
  name: 'crm_events_enqueue',
  text: `WITH inserted AS (
           INSERT INTO outbox (id, type, org_id, occurred_at, data, traceparent, version) VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (id) DO NOTHING
           RETURNING seq
         )
         SELECT pg_notify('${OUTBOX_CHANNEL}', min(seq)::text) FROM inserted HAVING count(*) > 0`,
};

/**
 * Record an event in the outbox as part of the caller's transaction (pass the client from
 * withTransaction). It is published after commit by an OutboxRelay; a rollback discards it.
 */
export async function enqueueEvent<T extends EventType>(db: Queryable, e: NewEvent<T>): Promise<EventEnvelope> {
  const { envelope, traceparent } = outgoing(e, traceparentOf());
  await db.query({
    ...ENQUEUE,
    values: [envelope.id, envelope.type, envelope.orgId, envelope.occurredAt, JSON.stringify(envelope.data), traceparent, envelope.version],
  });
  return envelope;
}

// The multi-row form: one statement whatever the count (arrays, not a VALUES list per size), so it stays one
// named prepared statement. Rows take their seq in array order (WITH ORDINALITY ... ORDER BY), which is
// the order the relay publishes them in; a repeated id, already stored or earlier in the same array, is skipped.
const ENQUEUE_MANY = {
  name: 'crm_events_enqueue_many',
  text: `WITH inserted AS (
           INSERT INTO outbox (id, type, org_id, occurred_at, data, traceparent, version)
           SELECT id, type, org_id, occurred_at, data, traceparent, version
           FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::jsonb[], $6::text[], $7::int[])
                WITH ORDINALITY AS e(id, type, org_id, occurred_at, data, traceparent, version, ord)
           ORDER BY ord
           ON CONFLICT (id) DO NOTHING
           RETURNING seq
         )
         SELECT pg_notify('${OUTBOX_CHANNEL}', min(seq)::text) FROM inserted HAVING count(*) > 0`,
};

/**
 * Record several events with one statement (one round trip, one NOTIFY), in the order given, with the
 * same rules as enqueueEvent: a stable id already in the outbox is ignored. Validation happens before
 * anything is sent, so one invalid event fails the call and nothing is written.
 */
export async function enqueueEvents(db: Queryable, events: NewEvent[]): Promise<EventEnvelope[]> {
  if (events.length === 0) return [];
  const active = traceparentOf();
  const rows = events.map((e) => outgoing(e, active));
  await db.query({
    ...ENQUEUE_MANY,
    values: [
      rows.map((r) => r.envelope.id),
      rows.map((r) => r.envelope.type),
      rows.map((r) => r.envelope.orgId),
      rows.map((r) => r.envelope.occurredAt),
      rows.map((r) => JSON.stringify(r.envelope.data)),
      rows.map((r) => r.traceparent),
      rows.map((r) => r.envelope.version),
    ],
  });
  return rows.map((r) => r.envelope);
}

/**
 * An event ready to be published without an outbox row (DirectPublisher): checked and completed (id, time, version,
 * trace context) exactly as enqueueEvent would store it, so its message is the one the relay would send for that row.
 */
export function eventToSend(e: NewEvent): { event: EventToSend; data: unknown } {
  const { envelope, traceparent } = outgoing(e, traceparentOf());
  const { id, type, orgId, version, data } = envelope;
  return { event: { id, type, orgId, occurredAt: new Date(envelope.occurredAt), version, dataJson: JSON.stringify(data), traceparent }, data };
}

function outgoing(e: EventInput, active: string | undefined): Outgoing {
  return { envelope: envelopeOf(e), traceparent: validTraceparent(e.traceparent) ?? active ?? null };
}

function envelopeOf(e: EventInput): EventEnvelope & { version: number } {
  // The type is the routing key: AMQP caps it at 255 bytes, and an empty one could never be bound to.
  if (!e.type || Buffer.byteLength(e.type) > 255) throw new Error(`Invalid event type "${e.type}"`);
  if (!e.orgId) throw new Error('Event orgId is required');
  const occurredAt = new Date(e.occurredAt ?? Date.now());
  if (Number.isNaN(occurredAt.getTime())) throw new Error(`Invalid occurredAt "${e.occurredAt}"`);
  const version = e.version ?? currentVersion(e.type);
  // A producer bug must fail the producer's transaction, not surface later as a dead-lettered event.
  checkProducedData(e.type, version, e.data);
  return {
    id: e.id ?? randomUUID(),
    type: e.type,
    orgId: e.orgId,
    occurredAt: occurredAt.toISOString(),
    version,
    data: e.data ?? null,
  };
}
