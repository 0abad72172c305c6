import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import type { Context, Span } from '@opentelemetry/api';
import { parseEnvelope, type EventEnvelope } from './envelope';
import { publisherRefusal, RefusedPublisherError, type PublisherCheck } from './publishers';
import { parseEventData } from './schemas';
import { EVENT_STAMP_HEADER, EVENT_STAMP_SEAL_HEADER, setEventOrigin, stampRefusal, type EventStampVerifier } from './stamps';
import { eventContexts, startEventSpan, TRACEPARENT_HEADER, validTraceparent } from './trace-context';

export interface Delivery {
  msg: ConsumeMessage;
  channel: ConfirmChannel;
}

/** How a consumer reads its deliveries: the envelope, whether its publisher may publish it, and its trace. */
export class DeliveryReader {
  constructor(
    private readonly queue: string,
    private readonly publishers: PublisherCheck,
    private readonly parseData: boolean,
    private readonly stamps?: EventStampVerifier,
  ) {}

  /**
   * The envelope, its data parsed by its schema with `parseData`; throws for a body no retry can fix, and
   * RefusedPublisherError for an event its publisher may not publish or (with `stamps`) whose stamp does not vouch for it.
   */
  decode(msg: ConsumeMessage): EventEnvelope {
    const event = parseEnvelope(msg.content);
    const refusal = publisherRefusal({ type: event.type, routingKey: msg.fields.routingKey, userId: msg.properties.userId }, this.publishers);
    if (refusal) throw new RefusedPublisherError(refusal);
    const stamp = msg.properties.headers?.[EVENT_STAMP_HEADER];
    if (this.stamps && stamp !== undefined) {
      const refused = stampRefusal(event, stamp, this.stamps, msg.properties.headers?.[EVENT_STAMP_SEAL_HEADER]);
      if (refused) throw new RefusedPublisherError(refused);
      setEventOrigin(event, stamp as string);
    }
    if (this.parseData) event.data = parseEventData(event.type, event.version ?? 1, event.data);
    return event;
  }

  /** The event's consumer span, child of the producer's (the message's `traceparent`), and its context. */
  trace(event: EventEnvelope, msg: ConsumeMessage): { span: Span; ctx: Context } {
    const traced = startEventSpan(event, validTraceparent(msg.properties.headers?.[TRACEPARENT_HEADER]), this.queue);
    eventContexts.set(event, traced.ctx);
    return traced;
  }
}
