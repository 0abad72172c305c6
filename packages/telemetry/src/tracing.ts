import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { idOnlyTracerProvider } from './id-only-tracer';

let installed = false;
let provider: TracerProvider | undefined;
let contextManager: AsyncLocalStorageContextManager | undefined;

export interface TelemetryOptions {
  /**
   * Whether the process needs the active span carried through async calls (an AsyncLocalStorage context manager)
   * when nothing is exported. 'always' (the default): its code reads the active span (a gRPC handler's outbox
   * write, a log line). 'when-exporting': the process passes trace context explicitly (the gateway: a request's
   * `traceparent` travels in its call context), so without export it skips AsyncLocalStorage, whose async hooks
   * tax every promise in the process.
   */
  activeContext?: 'always' | 'when-exporting';
}

/**
 * Install tracing for this process. Always: the W3C trace-context propagator and a tracer, so every request gets
 * a trace and span ids and `traceparent` travels gateway → gRPC → outbox → AMQP → consumers → webhook requests
 * (the spans themselves are started by grpc-kit, events, the gateway and webhooks, through @opentelemetry/api
 * only), and an AsyncLocalStorage context manager unless `activeContext` says the process does without.
 *
 * With no endpoint a span is only its ids (id-only-tracer.ts): nothing is recorded, buffered or sent.
 * With OTEL_EXPORTER_OTLP_ENDPOINT the SDK's tracer records spans and batches them to `<endpoint>/v1/traces`,
 * and PostgreSQL queries get spans too, but only inside a traced piece of work (`requireParentSpan`): a poller's
 * empty claim query is no root span. Must run before pg is loaded (runService calls it first) so the
 * instrumentation can patch it. Returns whether spans are exported.
 */
export function startTelemetry(serviceName: string, otlpEndpoint: string | undefined, opts: TelemetryOptions = {}): boolean {
  if (installed) return false;
  installed = true;
  const exporting = !!otlpEndpoint;
  if (exporting || opts.activeContext !== 'when-exporting') {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  if (exporting) {
    provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': serviceName }),
      spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${otlpEndpoint.replace(/\/$/, '')}/v1/traces` }) })],
    });
    trace.setGlobalTracerProvider(provider);
    new PgInstrumentation({ requireParentSpan: true });
  } else {
    trace.setGlobalTracerProvider(idOnlyTracerProvider);
  }
  return exporting;
}

/** Send what is still buffered and uninstall (SIGTERM, tests). */
export async function stopTelemetry(): Promise<void> {
  await provider?.shutdown();
  provider = undefined;
  installed = false;
  contextManager?.disable();
  contextManager = undefined;
  trace.disable();
  context.disable();
  propagation.disable();
}
