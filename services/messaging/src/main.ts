import { exitOnConfigError } from '@crm/config';
import { startTelemetry } from '@crm/telemetry';
import { loadConfig } from './config';

// Tracing must start before gRPC and pg are loaded, so the app is required only afterwards.
async function main() {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    exitOnConfigError(err);
  }
  startTelemetry('messaging', config.OTEL_EXPORTER_OTLP_ENDPOINT);
  const { startMessaging } = await import('./app');
  const { createLogger } = await import('@crm/logger');
  const log = createLogger('messaging', config.LOG_LEVEL);
  const service = await startMessaging(config, log);
  const shutdown = async (signal: string) => {
    log.info({ signal }, 'shutting down');
    await service.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`messaging failed to start: ${err?.message ?? err}\n`);
  process.exit(1);
});
