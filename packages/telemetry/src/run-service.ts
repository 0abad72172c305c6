import { exitOnConfigError } from '@crm/config';
import { startTelemetry, stopTelemetry, type TelemetryOptions } from './tracing';

interface BaseConfig {
  LOG_LEVEL: string;
  /** The gateway's bound on its own drain (SHUTDOWN_DELAY_MS + SHUTDOWN_TIMEOUT_MS); services use the default. */
  SHUTDOWN_DELAY_MS?: number;
  SHUTDOWN_TIMEOUT_MS?: number;
}

/**
 * A stop that has not finished by then (a consumer's handler stuck on a dead connection) ends in exit 1 anyway:
 * under Kubernetes' default 30 s grace period and compose's stop_grace_period, so the process ends on its own
 * terms, with a log line, rather than by SIGKILL.
 */
const STOP_BOUND_MS = 20_000;

/** What every service's app module exports (see services/<name>/src/app.ts). */
interface AppModule<C> {
  start(config: C, log: import('@crm/logger').Logger): Promise<{ stop(): Promise<void> }>;
}

/**
 * The process entry every service shares: read the config (a readable list of problems and exit 1 when it
 * is wrong), start tracing (always: trace context propagates even when nothing is exported), only then
 * load the app (with export on, tracing must patch pg before it is required, hence `loadApp` is a dynamic
 * import), start it, and stop it cleanly on SIGTERM/SIGINT. `telemetry`: see startTelemetry.
 */
export function runService<C extends BaseConfig>(
  name: string,
  loadConfig: (env: Record<string, string | undefined>) => C,
  loadApp: () => Promise<AppModule<C>>,
  telemetry: TelemetryOptions = {},
): void {
  const main = async () => {
    let config: C;
    try {
      config = loadConfig(process.env);
    } catch (err) {
      exitOnConfigError(err);
    }
    // The SDK reads the OTEL_* environment itself; loadConfig has checked OTEL_EXPORTER_OTLP_ENDPOINT is a URL.
    startTelemetry(name, telemetry);
    const app = await loadApp();
    const { createLogger } = await import('@crm/logger');
    const log = createLogger(name, config.LOG_LEVEL);
    const service = await app.start(config, log);
    const shutdown = async (signal: string) => {
      log.info({ signal }, 'shutting down');
      const bound = Math.max(STOP_BOUND_MS, (config.SHUTDOWN_DELAY_MS ?? 0) + (config.SHUTDOWN_TIMEOUT_MS ?? 0) + 5000);
      setTimeout(() => {
        log.error({ boundMs: bound }, 'shutdown did not finish in time; exiting');
        process.exit(1);
      }, bound).unref();
      await service.stop();
      // Spans still buffered for the collector go out before the process ends.
      await stopTelemetry().catch(() => undefined);
      process.exit(0);
    };
    process.once('SIGTERM', () => void shutdown('SIGTERM'));
    process.once('SIGINT', () => void shutdown('SIGINT'));
  };
  main().catch((err) => {
    process.stderr.write(`${name} failed to start: ${err?.message ?? err}\n`);
    process.exit(1);
  });
}
