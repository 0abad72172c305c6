import { isSpanContextValid, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import type { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';

/**
 * Start `@opentelemetry/sdk-node` for a process that exports spans. Loaded only then (tracing.ts requires this
 * module lazily): the SDK and its exporters take about 0.3 s to load, which a process exporting nothing never pays.
 *
 * The SDK reads the standard environment itself: OTEL_TRACES_EXPORTER (otlp, console, zipkin),
 * OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT / _PROTOCOL / _HEADERS, OTEL_TRACES_SAMPLER(_ARG), OTEL_BSP_*,
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME, OTEL_NODE_RESOURCE_DETECTORS, OTEL_LOG_LEVEL. What this sets:
 * - `service.name` defaults to the process's own name, under the detected resource, so OTEL_SERVICE_NAME and a
 *   `service.name` in OTEL_RESOURCE_ATTRIBUTES still win (the SDK's `serviceName` option would override them).
 * - the propagator is W3C trace context only, whatever OTEL_PROPAGATORS says: the bus carries `traceparent`
 *   (gRPC metadata, outbox row, AMQP header), so another format would break traces at the first hop.
 * - no metric readers and no log processors (the SDK would otherwise default both to OTLP): metrics are
 *   Prometheus (packages/metrics), logs are stdout lines carrying the trace and span ids.
 * - the one instrumentation is pg's, with `requireParentSpan` so a poller's empty claim query is no root span.
 *
 * Returns undefined when the SDK set up no tracer (OTEL_SDK_DISABLED, or no exporter it knows): then the caller
 * installs the id-only tracer, since the API's no-op tracer would mint no trace ids and context would stop here.
 */
export function startNodeSdk(serviceName: string, contextManager: AsyncLocalStorageContextManager): NodeSDK | undefined {
  const sdk = new NodeSDK({
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': serviceName })),
    textMapPropagator: new W3CTraceContextPropagator(),
    contextManager,
    instrumentations: [new PgInstrumentation({ requireParentSpan: true })],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  // A span that is never ended is never exported: this only asks whether the installed tracer mints ids.
  const probe = trace.getTracer('@crm/telemetry').startSpan('probe', { root: true }, ROOT_CONTEXT);
  if (isSpanContextValid(probe.spanContext())) return sdk;
  void sdk.shutdown();
  return undefined;
}
