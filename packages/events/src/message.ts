import type { ConfirmChannel, Options } from 'amqplib';
import { routingKeyOf } from './schemas';
import { EVENT_STAMP_HEADER, EVENT_STAMP_SEAL_HEADER, STAMP_CHECKERS, STAMPED_TYPES, type EventStamper } from './stamps';
import { TRACEPARENT_HEADER } from './trace-context';

/** One event as it leaves a producer, whichever way it goes: read back from an outbox row, or published straight away. */
export interface EventToSend {
  id: string;
  type: string;
  orgId: string;
  occurredAt: Date;
  version: number;
  /** `data` as JSON text: the relay passes the stored jsonb text through without a parse/serialise round trip. */
  dataJson: string;
  traceparent: string | null;
}

/** What goes on the wire for one event: the outbox relay and a direct publisher build it here, so both send the same message. */
export interface EventMessage {
  routingKey: string;
  body: Buffer;
  options: Options.Publish;
}

/**
 * The message for an event, published under `userId` (its connection's user: the broker vouches for it, consumers
 * check it, publishers.ts), with its producer's stamp when a `stamper` is given and the type is one of STAMPED_TYPES
 * (stamps.ts): signed here, once per publish. `data` is called only for the few types with narrower routing keys (schemas' routingKeys).
 */
export function eventMessage(e: EventToSend, userId: string, data: () => unknown, stamper?: EventStamper): EventMessage {
  const headers: Record<string, string> = {};
  // The enqueuing span's trace context, the parent of each consumer's span (no span of its own here: the publisher
  // only carries it, and a relay poll that finds nothing leaves no trace at all).
  if (e.traceparent) headers[TRACEPARENT_HEADER] = e.traceparent;
  const stamp = stamper && STAMPED_TYPES.has(e.type) ? stamper.stampEvent(e) : undefined;
  if (stamp) {
    headers[EVENT_STAMP_HEADER] = stamp;
    const seal = stamper!.sealStamp?.(stamp, STAMP_CHECKERS[e.type] ?? []);
    if (seal) headers[EVENT_STAMP_SEAL_HEADER] = seal;
  }
  const head = JSON.stringify({ id: e.id, type: e.type, orgId: e.orgId, occurredAt: e.occurredAt.toISOString(), version: e.version });
  return {
    routingKey: routingKeyOf(e.type, e.version, data),
    body: Buffer.from(`${head.slice(0, -1)},"data":${e.dataJson}}`),
    options: {
      persistent: true,
      contentType: 'application/json',
      messageId: e.id,
      type: e.type,
      userId,
      timestamp: Math.floor(e.occurredAt.getTime() / 1000),
      headers: e.traceparent || stamp ? headers : undefined,
    },
  };
}

/** Publish on a confirm channel; resolves when the broker confirms, rejects on a nack or a closed channel. */
export function publishConfirmed(channel: ConfirmChannel, exchange: string, m: EventMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    try {
      // A caller's window is a bounded batch, so a full write buffer (publish returning false) only means the
      // messages sit in memory a moment longer; the confirms are what is waited for.
      channel.publish(exchange, m.routingKey, m.body, m.options, (err) =>
        err ? reject(err instanceof Error ? err : new Error('message nacked by broker')) : resolve(),
      );
    } catch (err) {
      reject(err);
    }
  });
}
