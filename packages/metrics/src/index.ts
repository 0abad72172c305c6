/**
 * Prometheus metrics for every process: a registry per service (metrics.ts), the `/metrics` listener (server.ts) and
 * the instruments the shared packages record (instruments.ts). The README's "Metrics" section lists every name.
 */
export { DURATION_BUCKETS, Metrics, setProcessMetricsByDefault } from './metrics';
export { startMetricsServer, type MetricsServer } from './server';
export { type RunningService, withMetricsServer } from './running-service';
export { ChildCache } from './child-cache';
export * from './instruments';
export type { Counter, Gauge, Histogram } from 'prom-client';
export { parseSamples, sampleValue, type Sample } from './samples';
