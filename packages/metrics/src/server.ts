import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@crm/logger';
import type { Metrics } from './metrics';

export interface MetricsServer {
  /** The bound port (the chosen one when started with port 0). */
  port: number;
  close(): Promise<void>;
}

/**
 * A separate listener for Prometheus: `GET /metrics` (and HEAD) in text format, 404 for anything else. Its own port
 * keeps scrapes off the public API (no auth, no rate limit, never published by compose). Port 0 takes a free port.
 */
export async function startMetricsServer(metrics: Metrics, opts: { port: number; host: string; log: Logger }): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found\n');
      return;
    }
    metrics.scrape().then(
      (text) => {
        res.writeHead(200, { 'content-type': metrics.contentType });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err) => {
        opts.log.warn({ err }, 'metrics scrape failed');
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Scrape failed\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  opts.log.info({ port }, 'metrics listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
