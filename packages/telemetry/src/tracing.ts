import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

let provider: TracerProvider | undefined;
let contextManager: AsyncLocalStorageContextManager | undefined;

/**
 * Install tracing for this process. Always: the W3C trace-context propagator, an AsyncLocalStorage context
 * manager and a tracer provider, so every request gets a trace and span ids and `traceparent` travels
 * gateway → gRPC → outbox → AMQP → consumers → webhook requests (the spans themselves are started by
 * grpc-kit, events, the gateway and webhooks, through @opentelemetry/api only). With no endpoint the
 * provider has no span processor: a span costs two ids and an object, nothing is buffered or sent.
 *
 * With OTEL_EXPORTER_OTLP_ENDPOINT spans are batched to `<endpoint>/v1/traces`, and PostgreSQL queries get
 * spans too, but only inside a traced piece of work (`requireParentSpan`): a poller's empty claim query is
 * no root span. Must run before pg is loaded (runService calls it first) so the instrumentation can patch it.
 * Returns whether spans are exported.
 */
export function startTelemetry(serviceName: string, otlpEndpoint: string | undefined): boolean {
  if (provider) return false;
  const exporting = !!otlpEndpoint;
  provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: exporting ? [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${otlpEndpoint.replace(/\/$/, '')}/v1/traces` }) })] : [],
  });
  contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  if (exporting) new PgInstrumentation({ requireParentSpan: true });
  return exporting;
}

/** Send what is still buffered and uninstall (SIGTERM, tests). */
export async function stopTelemetry(): Promise<void> {
  await provider?.shutdown();
  provider = undefined;
  contextManager?.disable();
  contextManager = undefined;
  trace.disable();
  context.disable();
  propagation.disable();
}
