import type { Logger } from '@crm/logger';
import type { Metrics } from './metrics';
import { startMetricsServer } from './server';

/** What a started gRPC service answers: its gRPC port, its `/metrics` port, and how to stop it. */
export interface RunningService {
  port: number;
  /** Port of the Prometheus `/metrics` listener. */
  metricsPort: number;
  stop(): Promise<void>;
}

/**
 * A service's last start-up step, the `/metrics` listener: if it cannot listen, what was started is stopped and
 * the error thrown. The answer's stop() closes the listener first, then the service.
 */
export async function withMetricsServer<T extends { port: number; stop(): Promise<void> }>(
  metrics: Metrics,
  opts: { port: number; host: string; log: Logger },
  service: T,
): Promise<T & RunningService> {
  const scrapes = await startMetricsServer(metrics, opts).catch(async (err) => {
    await service.stop();
    throw err;
  });
  return {
    ...service,
    metricsPort: scrapes.port,
    async stop() {
      await scrapes.close();
      await service.stop();
    },
  };
}
