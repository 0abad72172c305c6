/**
 * The standard OpenTelemetry variables every process reads (the SDK reads them itself: exporting.ts and
 * node-sdk.ts), with what an unset one means here. Listed for people, not code: scripts/env-example.mjs writes them
 * into .env.example's generated part and the README's "Tracing" describes them.
 */
export const OTEL_VARIABLES: ReadonlyArray<{ name: string; unset: string; means: string }> = [
  {
    name: 'OTEL_TRACES_EXPORTER',
    unset: 'otlp when an OTLP endpoint is set, else none',
    means:
      'otlp, console, zipkin or none. Unlike the SDK on its own, unset with no endpoint exports nothing, so a process never sends to a collector nobody runs (localhost:4318).',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    unset: 'nothing exported',
    means:
      'Base URL of the OTLP collector (http://otel-collector:4318); spans go to <endpoint>/v1/traces. OTEL_EXPORTER_OTLP_TRACES_ENDPOINT gives the full URL instead.',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_PROTOCOL',
    unset: 'http/protobuf',
    means:
      'http/protobuf, http/json or grpc (then the endpoint is the gRPC port, 4317). OTEL_EXPORTER_OTLP_HEADERS adds headers (an API key of a hosted backend).',
  },
  {
    name: 'OTEL_SERVICE_NAME',
    unset: "the process's own name (gateway, crm, ...)",
    means: 'service.name of its spans; set it per service (deploy/env/<service>.env), never for all at once.',
  },
  {
    name: 'OTEL_RESOURCE_ATTRIBUTES',
    unset: 'none',
    means:
      'key=value,... added to every span of the process (deployment.environment.name=production); a service.name here wins over the default name.',
  },
  {
    name: 'OTEL_TRACES_SAMPLER',
    unset: 'parentbased_always_on',
    means:
      'Which traces are kept: always_on, always_off, traceidratio, parentbased_* (the gateway decides for a request, the services follow its traceparent flag). Read only by a process that exports.',
  },
  {
    name: 'OTEL_TRACES_SAMPLER_ARG',
    unset: '1',
    means: 'The ratio of traceidratio samplers (0.1: a tenth of traces).',
  },
  {
    name: 'OTEL_BSP_SCHEDULE_DELAY',
    unset: '5000',
    means:
      'Milliseconds between batches sent to the exporter (OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BSP_EXPORT_TIMEOUT likewise).',
  },
  {
    name: 'OTEL_SDK_DISABLED',
    unset: 'false',
    means: 'true: nothing exported whatever else is set (trace context still propagates).',
  },
];
