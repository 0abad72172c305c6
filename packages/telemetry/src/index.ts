export { startTelemetry, stopTelemetry } from './tracing';
export { runService } from './run-service';
