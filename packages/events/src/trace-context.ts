import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { EventEnvelope } from './envelope';

/** The AMQP header (and outbox column) that carries an event's W3C trace context. */
export const TRACEPARENT_HEADER = 'traceparent';

const tracer = trace.getTracer('@crm/events');
/** What `traceparent` looks like (version 00); anything else read from a header or row is ignored. */
const TRACEPARENT_SHAPE = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The `traceparent` of a context's span (the active one by default); undefined outside any span. */
export function traceparentOf(ctx: Context = context.active()): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier[TRACEPARENT_HEADER];
}

/** A valid traceparent string from an untrusted value (a header, a column), else undefined. */
export function validTraceparent(value: unknown): string | undefined {
  return typeof value === 'string' && TRACEPARENT_SHAPE.test(value) ? value : undefined;
}

/**
 * The span in which a consumer handles one event: a child of the producer's span (the `traceparent` the
 * relay put in the message headers), or the root of a new trace when the message had none.
 */
export function startEventSpan(event: EventEnvelope, traceparent: string | undefined, queue: string): { span: Span; ctx: Context } {
  const parent = traceparent ? propagation.extract(ROOT_CONTEXT, { [TRACEPARENT_HEADER]: traceparent }) : ROOT_CONTEXT;
  const span = tracer.startSpan(
    `${event.type} process`,
    {
      kind: SpanKind.CONSUMER,
      attributes: { 'messaging.system': 'rabbitmq', 'messaging.destination.name': queue, 'messaging.message.id': event.id },
    },
    parent,
  );
  return { span, ctx: trace.setSpan(parent, span) };
}

/** Marks a consumer span failed, with the start of the error's message. */
export function failSpan(span: Span | undefined, err: unknown): void {
  span?.setStatus({ code: SpanStatusCode.ERROR, message: String((err as Error)?.message ?? err).slice(0, 200) });
}

/**
 * Run `fn` in the trace of one consumed event (its consumer span). A batch handler uses it for the work of
 * each event, so what that work logs, calls and enqueues stays in the event's own trace; outside a consumer,
 * or for an event that carries no trace, `fn` simply runs.
 */
export function withEventTrace<T>(event: EventEnvelope, fn: () => T): T {
  const ctx = eventContexts.get(event);
  return ctx ? context.with(ctx, fn) : fn();
}

/**
 * The `traceparent` of a consumed event's span, for work recorded to happen later (a webhook delivery row,
 * a job row) that must continue the event's trace; undefined outside a consumer.
 */
export function eventTraceparent(event: EventEnvelope): string | undefined {
  const ctx = eventContexts.get(event);
  return ctx ? traceparentOf(ctx) : undefined;
}

/**
 * `traceId` and `spanId` of a consumed event's span, for a line logged about it: explicit, so the line keeps its
 * trace in a process without an active context (@crm/telemetry's `activeContext`); empty outside a consumer.
 */
export function eventTraceFields(event: EventEnvelope): { traceId?: string; spanId?: string } {
  const span = trace.getSpan(eventContexts.get(event) ?? ROOT_CONTEXT);
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}

/** The consumer span's context of each event being handled (kept off the envelope so it never gets serialised). */
export const eventContexts = new WeakMap<EventEnvelope, Context>();
