import net from 'node:net';
import { createLogger } from '@crm/logger';
import { Metrics } from './metrics';
import { withMetricsServer } from './running-service';

const log = createLogger('metrics-test', 'silent');

describe('withMetricsServer', () => {
  it('adds the /metrics port to what the service answers; stop() closes the listener, then the service', async () => {
    const order: string[] = [];
    const running = await withMetricsServer(
      new Metrics('crm', { processMetrics: false }),
      { port: 0, host: '127.0.0.1', log },
      {
        port: 1234,
        instanceId: 'i-1',
        stop: async () => {
          order.push('service');
        },
      },
    );
    expect(running.port).toBe(1234);
    expect(running.instanceId).toBe('i-1');
    const base = `http://127.0.0.1:${running.metricsPort}`;
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
    await running.stop();
    expect(order).toEqual(['service']);
    await expect(fetch(`${base}/metrics`)).rejects.toThrow();
  });

  it('stops the service and throws when the listener cannot start', async () => {
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as net.AddressInfo).port;
    let stopped = false;
    try {
      await expect(
        withMetricsServer(
          new Metrics('crm', { processMetrics: false }),
          { port, host: '127.0.0.1', log },
          { port: 1, stop: async () => void (stopped = true) },
        ),
      ).rejects.toThrow(/EADDRINUSE/);
      expect(stopped).toBe(true);
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });
});
