import { randomFillSync } from 'node:crypto';
import {
  context,
  isSpanContextValid,
  trace,
  TraceFlags,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';

const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

/** Random bytes are drawn from a pool refilled 4 KiB at a time: one system call per ~170 spans, not two per span. */
const pool = Buffer.alloc(4096);
let offset = pool.length;

function randomHex(bytes: number, zero: string): string {
  for (;;) {
    if (offset + bytes > pool.length) {
      randomFillSync(pool);
      offset = 0;
    }
    const hex = pool.toString('hex', offset, offset + bytes);
    offset += bytes;
    // An all-zero id is W3C's "invalid"; 2^-64 odds, but a span that silently ends its trace would be a real bug.
    if (hex !== zero) return hex;
  }
}

/**
 * The tracer of a process that exports nothing: each span is only its ids (a non-recording span), so trace
 * context still propagates (a child keeps its parent's trace id and flags and gets a new span id; a root gets a
 * new trace id, sampled, as the SDK's default parent-based always-on sampler would) while no span object, timing,
 * attribute copy or span-count metric is made. The SDK's span cost several microseconds and allocations per
 * request and per gRPC call, for a record nobody would read.
 */
class IdOnlyTracer implements Tracer {
  startSpan(_name: string, options?: SpanOptions, ctx: Context = context.active()): Span {
    const parent = options?.root ? undefined : trace.getSpanContext(ctx);
    if (parent && isSpanContextValid(parent)) {
      return trace.wrapSpanContext({
        traceId: parent.traceId,
        spanId: randomHex(8, ZERO_SPAN_ID),
        traceFlags: parent.traceFlags,
        traceState: parent.traceState,
      });
    }
    return trace.wrapSpanContext({ traceId: randomHex(16, ZERO_TRACE_ID), spanId: randomHex(8, ZERO_SPAN_ID), traceFlags: TraceFlags.SAMPLED });
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, options: SpanOptions, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, options: SpanOptions, ctx: Context, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, a?: SpanOptions | F, b?: Context | F, c?: F): ReturnType<F> {
    const fn = (c ?? (typeof b === 'function' ? b : a)) as F;
    const options = typeof a === 'object' ? a : undefined;
    const parent = typeof b === 'object' ? b : context.active();
    const span = this.startSpan(name, options, parent);
    return context.with(trace.setSpan(parent, span), fn as (span: Span) => ReturnType<F>, undefined, span);
  }
}

const tracer = new IdOnlyTracer();

/** Every tracer name gets the same id-only tracer (see above). */
export const idOnlyTracerProvider: TracerProvider = { getTracer: () => tracer };
