import { randomUUID } from 'node:crypto';
import { sampleValue, parseSamples } from '@crm/metrics';
import { eventually } from '@crm/testing';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type ServiceName, type Stack } from '../support/stack';
import { startReceiver, type Receiver } from '../webhooks/support';

// Every process serves Prometheus text on its own metrics port. Labels are bounded: requests are labelled by the
// route template that handled them, never by the path a client sent, so no id ever becomes a series.
describe("GET /metrics on each service's METRICS_PORT", () => {
  let stack: Stack;
  let owner: Client;
  let rx: Receiver;

  beforeAll(async () => {
    stack = await startStack({
      services: ['crm', 'webhooks'],
      // Low enough to reach with a few sign-in attempts (the sign-up below is one of them).
      env: { RATE_LIMIT_AUTH_PER_MINUTE: '5' },
      serviceEnv: { webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1' } },
    });
    owner = (await newOrg(client(stack.url), 'Acme')).owner;
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
    await stack?.stop();
  });

  const scrape = async (name: ServiceName | 'gateway') => {
    const res = await fetch(`http://127.0.0.1:${stack.metricsPort(name)}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    return res.text();
  };

  it('labels gateway requests by route template and status, and never by a contact id or an unknown path', async () => {
    const created = await owner.post('/api/v1/contacts', { name: 'Ada Lovelace', phone: '+84901234567' });
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    expect((await owner.get(`/api/v1/contacts/${id}`)).status).toBe(200);
    const unknownId = randomUUID();
    expect((await owner.get(`/api/v1/contacts/${unknownId}`)).status).toBe(404);
    const strayPath = `/api/v1/no-such-thing-${randomUUID()}`;
    expect((await owner.get(strayPath)).status).toBe(404);

    // The histogram is recorded on 'finish', which can come a moment after the client has the response.
    const text = await eventually(async () => {
      const t = await scrape('gateway');
      return sampleValue(t, 'http_server_duration_seconds_count', { route: 'unmatched', status: '404' }) ? t : undefined;
    });
    expect(text).toContain('# TYPE http_server_duration_seconds histogram');
    const count = (labels: Record<string, string>) => sampleValue(text, 'http_server_duration_seconds_count', { service: 'gateway', ...labels });
    expect(count({ method: 'GET', route: '/api/v1/contacts/:id', status: '200' })).toBe(1);
    expect(count({ method: 'GET', route: '/api/v1/contacts/:id', status: '404' })).toBe(1);
    expect(count({ method: 'POST', route: '/api/v1/contacts', status: '201' })).toBe(1);
    expect(count({ method: 'GET', route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    for (const raw of [id, unknownId, strayPath]) expect(text).not.toContain(raw);
    // Every route label is a template the router knows, or "unmatched".
    const templates = new Set([...stack.routes.map((r) => r.path), 'unmatched']);
    const routes = new Set(
      parseSamples(text)
        .filter((s) => s.name === 'http_server_duration_seconds_count')
        .map((s) => s.labels.route),
    );
    for (const route of routes) expect(templates).toContain(route);
  });

  it('crm reports its gRPC calls, its outbox and its consumers on its own port', async () => {
    const created = await owner.post('/api/v1/contacts', { name: 'Grace Hopper', phone: '+84901234568' });
    expect(created.status).toBe(201);
    const text = await eventually(async () => {
      const t = await scrape('crm');
      return sampleValue(t, 'amqp_messages_published_total', { type: 'contact.created' }) ? t : undefined;
    });
    expect(
      sampleValue(text, 'grpc_server_duration_seconds_count', {
        service: 'crm',
        grpc_service: 'crm.v1.CrmService',
        grpc_method: 'CreateContact',
        grpc_code: 'OK',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(sampleValue(text, 'outbox_backlog_rows', { service: 'crm' })).toEqual(expect.any(Number));
    expect(sampleValue(text, 'outbox_oldest_unsent_age_seconds', { service: 'crm' })).toEqual(expect.any(Number));
    const queue = `${stack.env.EVENTS_EXCHANGE}.crm.contact-events`;
    expect(sampleValue(text, 'amqp_queue_messages_ready', { queue })).toEqual(expect.any(Number));
    // crm consumes its own contact.created for scoring and analytics.
    await eventually(async () => sampleValue(await scrape('crm'), 'amqp_messages_consumed_total', { queue, outcome: 'ack' }));
    expect(text).not.toContain(created.body.id);
    // Another service's series never show on crm's port.
    expect(text).not.toContain('webhook_deliveries_total');
    expect(text).not.toContain('service="webhooks"');
  });

  it('webhooks counts and times a delivery by outcome', async () => {
    const hook = await owner.post('/api/v1/webhook-settings', { url: rx.url('/metrics-hook'), events: ['contact.created'] });
    expect(hook.status).toBe(201);
    expect((await owner.post('/api/v1/contacts', { name: 'Katherine Johnson', phone: '+84901234569' })).status).toBe(201);
    await eventually(async () => rx.at('/metrics-hook').length > 0);
    const text = await eventually(async () => {
      const t = await scrape('webhooks');
      return sampleValue(t, 'webhook_deliveries_total', { outcome: 'success' }) ? t : undefined;
    });
    expect(sampleValue(text, 'webhook_delivery_duration_seconds_count', { service: 'webhooks', outcome: 'success' })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(hook.body.id);
    expect(text).not.toContain(String(rx.port));
  });

  it('counts 429s by the limit that refused them', async () => {
    const api = client(stack.url);
    let status = 0;
    for (let i = 0; i < 10 && status !== 429; i++)
      status = (await api.post('/api/v1/auth/login', { email: 'nobody@example.test', password: 'wrong password' })).status;
    expect(status).toBe(429);
    const text = await scrape('gateway');
    expect(sampleValue(text, 'http_rate_limit_rejections_total', { service: 'gateway', limit: 'auth_ip' })).toBe(1);
    expect(sampleValue(text, 'http_server_duration_seconds_count', { route: '/api/v1/auth/login', status: '429' })).toBe(1);
  });

  it('answers 404 for anything but /metrics', async () => {
    expect((await fetch(`http://127.0.0.1:${stack.metricsPort('gateway')}/`)).status).toBe(404);
  });
});
