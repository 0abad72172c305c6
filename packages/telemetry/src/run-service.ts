import { exitOnConfigError } from '@crm/config';
import { startTelemetry, stopTelemetry } from './tracing';

interface BaseConfig {
  LOG_LEVEL: string;
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
}

/** What every service's app module exports (see services/<name>/src/app.ts). */
interface AppModule<C> {
  start(config: C, log: import('@crm/logger').Logger): Promise<{ stop(): Promise<void> }>;
}

/**
 * The process entry every service shares: read the config (a readable list of problems and exit 1 when it
 * is wrong), start tracing (always: trace context propagates even when nothing is exported), only then
 * load the app (with export on, tracing must patch pg before it is required, hence `loadApp` is a dynamic
 * import), start it, and stop it cleanly on SIGTERM/SIGINT.
 */
export function runService<C extends BaseConfig>(
  name: string,
  loadConfig: (env: Record<string, string | undefined>) => C,
  loadApp: () => Promise<AppModule<C>>,
): void {
  const main = async () => {
    let config: C;
    try {
      config = loadConfig(process.env);
    } catch (err) {
      exitOnConfigError(err);
    }
    startTelemetry(name, config.OTEL_EXPORTER_OTLP_ENDPOINT);
    const app = await loadApp();
    const { createLogger } = await import('@crm/logger');
    const log = createLogger(name, config.LOG_LEVEL);
    const service = await app.start(config, log);
    const shutdown = async (signal: string) => {
      log.info({ signal }, 'shutting down');
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
