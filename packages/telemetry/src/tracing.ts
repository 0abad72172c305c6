import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { exportRequested } from './exporting';
import { idOnlyTracerProvider } from './id-only-tracer';

let installed = false;
let sdk: { shutdown(): Promise<void> } | undefined;
let contextManager: AsyncLocalStorageContextManager | undefined;

export interface TelemetryOptions {
  /**
   * Whether the process needs the active span carried through async calls (an AsyncLocalStorage context manager)
   * when nothing is exported. 'always' (the default): its code reads the active span (a gRPC handler's outbox
   * write, a log line). 'when-exporting': the process passes trace context explicitly (a request's or a gRPC
   * call's `ctx.traceparent`, a consumed event's `eventTraceparent`; tests/architecture/explicit-trace-context.test.ts
   * holds such a service to it), so without export it skips AsyncLocalStorage, whose promise hooks tax every promise
   * in the process (measured: ~1.6 µs per promise, ~9% of a service's CPU per message in bench/realtime).
   */
  activeContext?: 'always' | 'when-exporting';
}

/**
 * Install tracing for this process, configured by the standard OTEL_* environment. Always: the W3C trace-context
 * propagator and a tracer, so every request gets a trace and span ids and `traceparent` travels gateway → gRPC →
 * outbox → AMQP → consumers → webhook requests (the spans themselves are started by grpc-kit, events, the gateway
 * and webhooks, through @opentelemetry/api only), and an AsyncLocalStorage context manager unless `activeContext`
 * says the process does without.
 *
 * Exporting nothing (the default: see exporting.ts for when the environment asks for export) a span is only its
 * ids (id-only-tracer.ts): nothing is recorded, buffered or sent, and the SDK is not even loaded. Exporting,
 * `@opentelemetry/sdk-node` runs (node-sdk.ts): `serviceName` is the default `service.name`, the sampler,
 * exporter and resource come from the environment, and PostgreSQL queries inside traced work get spans. Must run
 * before pg is loaded (runService calls it first) so the instrumentation can patch it. Returns whether spans are
 * exported.
 */
export function startTelemetry(serviceName: string, opts: TelemetryOptions = {}): boolean {
  if (installed) return false;
  installed = true;
  const exporting = exportRequested();
  if (exporting || opts.activeContext !== 'when-exporting') contextManager = new AsyncLocalStorageContextManager();
  if (exporting) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only by a process that exports
    const { startNodeSdk } = require('./node-sdk') as typeof import('./node-sdk');
    sdk = startNodeSdk(serviceName, contextManager!);
    if (sdk) return true;
  }
  if (contextManager) context.setGlobalContextManager(contextManager.enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(idOnlyTracerProvider);
  return false;
}

/** Send what is still buffered and uninstall (SIGTERM, tests). */
export async function stopTelemetry(): Promise<void> {
  await sdk?.shutdown();
  sdk = undefined;
  installed = false;
  contextManager?.disable();
  contextManager = undefined;
  trace.disable();
  context.disable();
  propagation.disable();
}
