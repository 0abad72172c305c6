export { startTelemetry, stopTelemetry, type TelemetryOptions } from './tracing';
export { runService } from './run-service';
