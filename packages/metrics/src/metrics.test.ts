import { createLogger } from '@crm/logger';
import { ChildCache } from './child-cache';
import { grpcServerDuration, httpServerDuration, outboxBacklog } from './instruments';
import { Metrics, setProcessMetricsByDefault } from './metrics';
import { startMetricsServer } from './server';

const log = createLogger('metrics-test', 'silent');

describe('Metrics', () => {
  it('renders a histogram with its labels, bucket series and the service label', async () => {
    const metrics = new Metrics('crm', { processMetrics: false });
    httpServerDuration(metrics).labels({ method: 'GET', route: '/api/v1/contacts/:id', status: '200' }).observe(0.03);
    const text = await metrics.scrape();
    expect(text).toContain('# TYPE http_server_duration_seconds histogram');
    expect(text).toContain('http_server_duration_seconds_bucket{le="0.05",service="crm",method="GET",route="/api/v1/contacts/:id",status="200"} 1');
    expect(text).toContain('http_server_duration_seconds_count{service="crm",method="GET",route="/api/v1/contacts/:id",status="200"} 1');
  });

  it('hands out one instrument per name, so two components add to the same series', async () => {
    const metrics = new Metrics('crm', { processMetrics: false });
    expect(grpcServerDuration(metrics)).toBe(grpcServerDuration(metrics));
    expect(metrics.counter('x_total', 'x', ['a'])).toBe(metrics.counter('x_total', 'x', ['a']));
  });

  it('keeps the registries of two services apart (the test stack runs them in one process)', async () => {
    const crm = new Metrics('crm', { processMetrics: false });
    const webhooks = new Metrics('webhooks', { processMetrics: false });
    outboxBacklog(crm).set(3);
    expect(await crm.scrape()).toContain('outbox_backlog_rows{service="crm"} 3');
    expect(await webhooks.scrape()).not.toContain('outbox_backlog_rows');
  });

  it('runs on-scrape collectors, and answers without one that hangs or throws', async () => {
    const metrics = new Metrics('crm', { processMetrics: false });
    const gauge = outboxBacklog(metrics);
    metrics.onCollect(() => gauge.set(7));
    metrics.onCollect(() => Promise.reject(new Error('database down')));
    const remove = metrics.onCollect(() => new Promise(() => undefined));
    remove();
    expect(await metrics.scrape()).toContain('outbox_backlog_rows{service="crm"} 7');
  });

  it('includes the process metrics by default', async () => {
    expect(await new Metrics('gateway').scrape()).toContain('# TYPE process_cpu_seconds_total counter');
  });

  it('leaves the process series out when told, by default (the test harness) or per instance', async () => {
    setProcessMetricsByDefault(false);
    try {
      expect(await new Metrics('gateway').scrape()).not.toContain('process_cpu_seconds_total');
      expect(await new Metrics('gateway', { processMetrics: true }).scrape()).toContain('process_cpu_seconds_total');
    } finally {
      setProcessMetricsByDefault(true);
    }
    expect(await new Metrics('gateway').scrape()).toContain('process_cpu_seconds_total');
  });
});

describe('ChildCache', () => {
  it('makes a child once per distinct label values', () => {
    const made: string[][] = [];
    const cache = new ChildCache((...values: string[]) => made.push(values));
    cache.get('GET', '/a', '200');
    cache.get('GET', '/a', '200');
    cache.get('GET', '/a', '404');
    expect(made).toEqual([
      ['GET', '/a', '200'],
      ['GET', '/a', '404'],
    ]);
  });
});

describe('startMetricsServer', () => {
  it('answers GET /metrics in Prometheus text format, 404 elsewhere, and stops on close', async () => {
    const metrics = new Metrics('gateway', { processMetrics: false });
    outboxBacklog(metrics).set(1);
    const server = await startMetricsServer(metrics, { port: 0, host: '127.0.0.1', log });
    const base = `http://127.0.0.1:${server.port}`;
    try {
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(await res.text()).toContain('# TYPE outbox_backlog_rows gauge');
      expect((await fetch(`${base}/`)).status).toBe(404);
      expect((await fetch(`${base}/metrics/x`)).status).toBe(404);
      expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(404);
    } finally {
      await server.close();
    }
    await expect(fetch(`${base}/metrics`)).rejects.toThrow();
  });
});
