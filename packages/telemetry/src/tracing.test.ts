import { context, propagation, ROOT_CONTEXT, trace, TraceFlags, type Context } from '@opentelemetry/api';
import { startTelemetry, stopTelemetry } from './tracing';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

/** A context whose remote parent is TRACE/SPAN with `flags`, as the W3C propagator reads it from a header. */
const remoteParent = (flags = '01'): Context => propagation.extract(ROOT_CONTEXT, { traceparent: `00-${TRACE}-${SPAN}-${flags}` });

/** The OTEL_* variables as the test run found them: each test sets its own and gets these back. */
const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('OTEL_')));

beforeEach(() => {
  for (const k of Object.keys(process.env)) if (k.startsWith('OTEL_')) delete process.env[k];
});

afterEach(async () => {
  await stopTelemetry();
  for (const k of Object.keys(process.env)) if (k.startsWith('OTEL_')) delete process.env[k];
  Object.assign(process.env, inherited);
});

describe('startTelemetry without an exporter', () => {
  it('spans are only ids: a child keeps its parent trace id and flags with a new span id, and records nothing', () => {
    startTelemetry('test');
    const tracer = trace.getTracer('t');
    const child = tracer.startSpan('child', {}, remoteParent());
    const sc = child.spanContext();
    expect(sc.traceId).toBe(TRACE);
    expect(sc.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(sc.spanId).not.toBe(SPAN);
    expect(sc.traceFlags).toBe(TraceFlags.SAMPLED);
    expect(child.isRecording()).toBe(false);
    // An unsampled parent stays unsampled downstream.
    expect(tracer.startSpan('x', {}, remoteParent('00')).spanContext().traceFlags).toBe(TraceFlags.NONE);
  });

  it('a span without a valid parent (or with root: true) starts a new sampled trace, with ids that differ per span', () => {
    startTelemetry('test');
    const tracer = trace.getTracer('t');
    const a = tracer.startSpan('a', {}, ROOT_CONTEXT).spanContext();
    const b = tracer.startSpan('b', { root: true }, remoteParent()).spanContext();
    for (const sc of [a, b]) {
      expect(sc.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(sc.traceId).not.toBe('0'.repeat(32));
      expect(sc.traceFlags).toBe(TraceFlags.SAMPLED);
    }
    expect(b.traceId).not.toBe(TRACE);
    expect(a.traceId).not.toBe(b.traceId);
    expect(a.spanId).not.toBe(b.spanId);
  });

  it('the active span follows async work by default; startActiveSpan makes its span active', async () => {
    startTelemetry('test');
    const tracer = trace.getTracer('t');
    const seen = await tracer.startActiveSpan('outer', async (span) => {
      await new Promise((r) => setTimeout(r, 1));
      return { active: trace.getActiveSpan()?.spanContext().spanId, own: span.spanContext().spanId };
    });
    expect(seen.active).toBe(seen.own);
  });

  it("activeContext 'when-exporting': no context manager, so context.with does not carry a span", () => {
    startTelemetry('test', { activeContext: 'when-exporting' });
    const span = trace.getTracer('t').startSpan('s', {}, remoteParent());
    // Trace context still propagates explicitly: the span has its ids and the propagator writes them.
    const carrier: Record<string, string> = {};
    propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
    expect(carrier.traceparent).toBe(`00-${TRACE}-${span.spanContext().spanId}-01`);
    expect(context.with(trace.setSpan(ROOT_CONTEXT, span), () => trace.getActiveSpan())).toBeUndefined();
  });
});

describe('startTelemetry with an exporter', () => {
  it("records spans (the SDK's tracer) and keeps the context manager even with activeContext 'when-exporting'", () => {
    // Nothing listens there; the span is never ended, so nothing is sent.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = 'http://127.0.0.1:9';
    expect(startTelemetry('test', { activeContext: 'when-exporting' })).toBe(true);
    const span = trace.getTracer('t').startSpan('s', {}, remoteParent());
    expect(span.isRecording()).toBe(true);
    expect(span.spanContext().traceId).toBe(TRACE);
    expect(context.with(trace.setSpan(ROOT_CONTEXT, span), () => trace.getActiveSpan())).toBe(span);
  });
});
