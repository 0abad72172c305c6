import { context, propagation, ROOT_CONTEXT, TraceFlags, type Context, type SpanContext } from '@opentelemetry/api';

/** The W3C header (and gRPC metadata key, AMQP header) that carries the trace across every boundary. */
export const TRACEPARENT = 'traceparent';

/**
 * The `traceparent` of a context's span (the active one by default), through the installed W3C propagator;
 * undefined outside any span or when tracing is not installed.
 */
export function traceparentOf(ctx: Context = context.active()): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier[TRACEPARENT];
}

/**
 * A span's `traceparent`: what the W3C propagator writes for it (version 00 defines only the sampled flag), formatted
 * directly, for code that holds the span (a server's, a request's) on a hot path. The span's ids must be valid, as
 * every span the tracers here start has.
 */
export function traceparentOfSpan(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${sc.traceFlags & TraceFlags.SAMPLED ? '01' : '00'}`;
}

/** A context whose remote parent is `traceparent`; the root context when it is missing or malformed (a new trace). */
export function contextFromTraceparent(traceparent: unknown): Context {
  return typeof traceparent === 'string' && traceparent ? propagation.extract(ROOT_CONTEXT, { [TRACEPARENT]: traceparent }) : ROOT_CONTEXT;
}

/**
 * `traceId` and `spanId` of the call a handler serves (its `ctx.traceparent`), for a line it logs: explicit, so the
 * line keeps its trace in a process without an active context (@crm/telemetry's `activeContext`).
 */
export function traceFields(ctx: { traceparent?: string }): { traceId?: string; spanId?: string } {
  const parts = ctx.traceparent?.split('-');
  return parts?.length === 4 ? { traceId: parts[1], spanId: parts[2] } : {};
}
