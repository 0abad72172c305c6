import { context, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { withTransaction } from '@crm/db';
import { eventually } from '@crm/testing';
import type { EventEnvelope } from './envelope';
import { enqueueEvent } from './outbox';
import { Harness, ORG, sleep } from './test-support/harness';
import { offCatalogue } from './test-support/off-catalogue';
import { eventTraceparent, withEventTrace } from './trace-context';

// What @crm/telemetry installs in every process, with spans kept in memory so the test can read them.
const exporter = new InMemorySpanExporter();
const contextManager = new AsyncLocalStorageContextManager().enable();
beforeAll(() => {
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }));
});
afterAll(() => {
  trace.disable();
  context.disable();
  propagation.disable();
});

const tracer = trace.getTracer('events-test');
const activeTraceId = () => trace.getActiveSpan()?.spanContext().traceId;

let h: Harness;
beforeEach(async () => {
  h = await Harness.create();
  exporter.reset();
});
afterEach(async () => {
  await h.close();
});

/** Enqueue an event inside a span of its own, as a gRPC handler does; returns the event and that span's ids. */
async function emitInSpan(type: string, data: unknown = {}): Promise<{ event: EventEnvelope; traceId: string; spanId: string }> {
  const span = tracer.startSpan('producer', {}, ROOT_CONTEXT);
  const event = await context.with(trace.setSpan(ROOT_CONTEXT, span), () =>
    withTransaction(h.pool, (c) => enqueueEvent(c, offCatalogue({ type, orgId: ORG, data }))),
  );
  span.end();
  return { event, ...span.spanContext() };
}

test("a consumed event's handler runs in a span of the producer's trace, the child of the span that enqueued it", async () => {
  const queue = h.queue();
  const seen: Array<{ id: string; traceId?: string; traceparent?: string }> = [];
  await h.consumer({
    queue,
    pool: h.pool,
    handler: async (e) => void seen.push({ id: e.id, traceId: activeTraceId(), traceparent: eventTraceparent(e) }),
  });
  await h.relay();

  const produced = await emitInSpan('widget.created');
  const { rows } = await h.pool.query('SELECT traceparent FROM outbox WHERE id = $1', [produced.event.id]);
  expect(rows[0].traceparent).toBe(`00-${produced.traceId}-${produced.spanId}-01`);

  await eventually(async () => seen.length === 1);
  expect(seen[0].traceId).toBe(produced.traceId);
  expect(seen[0].traceparent).toMatch(new RegExp(`^00-${produced.traceId}-[0-9a-f]{16}-01$`));
  await eventually(async () => exporter.getFinishedSpans().some((s) => s.name === 'widget.created process'));
  const consumerSpan = exporter.getFinishedSpans().find((s) => s.name === 'widget.created process')!;
  expect(consumerSpan.parentSpanContext?.spanId).toBe(produced.spanId);
});

test('an event enqueued outside any span reaches its handler as the root of a new trace', async () => {
  const queue = h.queue();
  const traceIds: Array<string | undefined> = [];
  await h.consumer({ queue, pool: h.pool, handler: async () => void traceIds.push(activeTraceId()) });
  await h.relay();

  await h.emit('widget.created');
  await eventually(async () => traceIds.length === 1);
  expect(traceIds[0]).toMatch(/^[0-9a-f]{32}$/);
  expect(traceIds[0]).not.toBe('0'.repeat(32));
});

test('in a batch of events from different traces, withEventTrace puts each event’s work in its own trace', async () => {
  const queue = h.queue();
  const seen = new Map<string, string | undefined>();
  const batchSizes: number[] = [];
  // A long flush window, so the events published one after the other arrive in one batch.
  await h.consumer({
    queue,
    pool: h.pool,
    batchFlushMs: 300,
    batchHandler: async (events) => {
      batchSizes.push(events.length);
      for (const e of events) await withEventTrace(e, async () => void seen.set(e.id, activeTraceId()));
    },
  });
  await h.relay();

  const a = await emitInSpan('widget.created');
  const b = await emitInSpan('widget.updated');
  await eventually(async () => seen.size === 2);
  expect(batchSizes).toEqual([2]);
  expect(a.traceId).not.toBe(b.traceId);
  expect(seen.get(a.event.id)).toBe(a.traceId);
  expect(seen.get(b.event.id)).toBe(b.traceId);
});

test('a relay and a consumer polling and finding nothing start no span', async () => {
  const queue = h.queue();
  const handled: string[] = [];
  await h.consumer({ queue, pool: h.pool, handler: async (e) => void handled.push(e.id) });
  const relay = await h.relay({ pollMs: 20 });
  for (let i = 0; i < 5; i++) relay.wake();
  await sleep(300);
  expect(exporter.getFinishedSpans()).toEqual([]);

  // The exporter does see spans: the one event then published gives exactly one, its consumer's.
  await h.emit('widget.created');
  await eventually(async () => handled.length === 1 && exporter.getFinishedSpans().length > 0);
  await sleep(100);
  expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['widget.created process']);
});
