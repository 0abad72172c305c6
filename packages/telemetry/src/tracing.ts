import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { AmqplibInstrumentation } from '@opentelemetry/instrumentation-amqplib';

let sdk: NodeSDK | undefined;

/**
 * Start tracing for a service. Must run before gRPC, express or pg are loaded (main.ts calls it first),
 * so the instrumentations can patch them; traces then flow gateway → services through gRPC metadata.
 * Nothing is exported unless OTEL_EXPORTER_OTLP_ENDPOINT is set: no collector, no cost.
 */
export function startTelemetry(serviceName: string, otlpEndpoint: string | undefined): boolean {
  if (!otlpEndpoint || sdk) return false;
  sdk = new NodeSDK({
    serviceName,
    traceExporter: new OTLPTraceExporter({ url: `${otlpEndpoint.replace(/\/$/, '')}/v1/traces` }),
    instrumentations: [
      new HttpInstrumentation(),
      new ExpressInstrumentation(),
      new GrpcInstrumentation(),
      new PgInstrumentation(),
      new AmqplibInstrumentation(),
    ],
  });
  sdk.start();
  return true;
}

export async function stopTelemetry(): Promise<void> {
  await sdk?.shutdown();
  sdk = undefined;
}
