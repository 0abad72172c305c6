import { getBooleanFromEnv, getStringFromEnv, getStringListFromEnv } from '@opentelemetry/core';

/**
 * Whether this process's environment asks for spans to be exported, read as the OpenTelemetry SDK reads it (an
 * empty variable counts as unset) with one deliberate difference: with `OTEL_TRACES_EXPORTER` unset the SDK would
 * default to `otlp` at http://localhost:4318, which in this product's deployments is nobody, so an unset exporter
 * means `otlp` only when an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT`, as before the SDK) and `none` otherwise. `OTEL_SDK_DISABLED=true` and an
 * exporter list starting with `none` (the SDK's own reading) export nothing.
 */
export function exportRequested(): boolean {
  if (getBooleanFromEnv('OTEL_SDK_DISABLED')) return false;
  const exporters = (getStringListFromEnv('OTEL_TRACES_EXPORTER') ?? []).filter((e) => e && e !== 'null');
  if (exporters.length > 0) return exporters[0] !== 'none';
  return !!(getStringFromEnv('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? getStringFromEnv('OTEL_EXPORTER_OTLP_ENDPOINT'));
}
