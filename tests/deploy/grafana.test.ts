import { readFileSync } from 'node:fs';
import path from 'node:path';

// The dashboard is checked as data (no Grafana here): every metric it queries is one the README's "Metrics" table
// documents, so a renamed metric cannot leave a panel silently empty.
const root = path.join(__dirname, '..', '..');
const dashboard = JSON.parse(readFileSync(path.join(root, 'deploy', 'grafana', 'crm-dashboard.json'), 'utf8')) as {
  panels: Array<{ type: string; title: string; targets?: Array<{ expr: string }> }>;
};
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
const metricsSection = readme.slice(readme.indexOf('## Metrics'), readme.indexOf('## Design decisions'));
const documented = new Set([...metricsSection.matchAll(/`([a-z][a-z0-9_]+_(?:total|seconds|rows|ready|sessions))`/g)].map((m) => m[1]));

/** Metric names an expression reads (`foo_bucket` and `foo_count` are series of the histogram `foo`). */
function metricsOf(query: string): string[] {
  const expr = query.replace(/\b(by|without)\s*\([^)]*\)/g, ''); // grouping labels are not metrics
  const names = [...expr.matchAll(/\b([a-z][a-z0-9_]*)\s*(?:\{|\[)/g)].map((m) => m[1]);
  const bare = [...expr.matchAll(/\(\s*([a-z][a-z0-9_]*)\s*\)/g)].map((m) => m[1]);
  return [...names, ...bare].map((n) => n.replace(/_(bucket|count|sum)$/, ''));
}

test('the README documents the metric names', () => {
  expect(documented.size).toBeGreaterThanOrEqual(11);
});

test('every panel queries only documented metrics', () => {
  const queried = new Set<string>();
  for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
    expect({ panel: panel.title, targets: panel.targets?.length ?? 0 }).toEqual({ panel: panel.title, targets: expect.any(Number) });
    for (const t of panel.targets!) for (const name of metricsOf(t.expr)) queried.add(name);
  }
  for (const name of queried) expect({ name, documented: documented.has(name) }).toEqual({ name, documented: true });
  // The list: requests, gRPC, queues, outbox, webhooks, sessions, rate limits all have a panel.
  for (const name of [
    'http_server_duration_seconds',
    'grpc_server_duration_seconds',
    'amqp_queue_messages_ready',
    'outbox_backlog_rows',
    'outbox_oldest_unsent_age_seconds',
    'webhook_deliveries_total',
    'chatnet_sessions',
    'http_rate_limit_rejections_total',
  ])
    expect(queried).toContain(name);
});
