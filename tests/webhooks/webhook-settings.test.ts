import { client, email, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { startReceiver, verifySignature, type Receiver } from './support';
import { publicEventTypes } from '@crm/events';
import { connectPatiently } from '../support/patient-client';
import { activityNow } from '../support/server-activity';

// Webhook settings through the gateway: create (secret shown once), list, read, update, delete, test
// send, the attempt log and redelivery; settings:edit for every route, reads included; another org sees nothing.
describe('webhook settings', () => {
  let stack: Stack;
  let api: Client;
  let owner: Client;
  let agent: Client;
  let otherOrg: Client;
  let rx: Receiver;
  const EVENTS = ['contact.created', 'message.received'];

  beforeAll(async () => {
    stack = await startStack({
      services: ['webhooks'],
      serviceEnv: { webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1', WEBHOOK_RETRY_SCHEDULE: '200ms,500ms,1s' } },
    });
    api = client(stack.url);
    rx = await startReceiver();
    ({ owner } = await newOrg(api, 'Acme'));
    ({ owner: otherOrg } = await newOrg(api, 'Globex'));
    const agentEmail = email('agent');
    const created = await owner.post('/api/v1/users', { email: agentEmail, fullName: 'Andy Agent', role: 'agent', password: 'agent password 1' });
    expect(created.status).toBe(201);
    const login = await api.post('/api/v1/auth/login', { email: agentEmail, password: 'agent password 1' });
    agent = api.as(login.body.token);
  });
  afterAll(async () => {
    await rx?.close();
    await stack?.stop();
  });

  let id: string;
  let secret: string;

  describe('POST /api/v1/webhook-settings', () => {
    it('creates an active webhook (201) and returns a generated whsec_ secret once', async () => {
      const res = await owner.post('/api/v1/webhook-settings', { url: rx.url('/hook'), events: EVENTS });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        url: rx.url('/hook'),
        events: EVENTS,
        active: true,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      });
      id = res.body.id;
      secret = res.body.secret;
    });

    it('keeps a secret the caller chose and does not echo it', async () => {
      const chosen = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
      const res = await owner.post('/api/v1/webhook-settings', { url: rx.url('/chosen'), events: ['contact.updated'], secret: chosen });
      expect(res.status).toBe(201);
      expect(res.body.secret).toBeUndefined();
      const test = await owner.post(`/api/v1/webhook-settings/${res.body.id}/test`);
      expect(test.body.ok).toBe(true);
      expect(verifySignature(chosen, rx.at('/chosen')[0])).toBe(true);
      expect((await owner.del(`/api/v1/webhook-settings/${res.body.id}`)).status).toBe(204);
    });

    it.each([
      [{ events: EVENTS }, 'url'],
      [{ url: 'not a url', events: EVENTS }, 'url'],
      [{ url: 'ftp://127.0.0.1/x', events: EVENTS }, 'url'],
      [{ url: 'http://user:pw@127.0.0.1/x', events: EVENTS }, 'url'],
      [{ url: 'http://127.0.0.1/x' }, 'events'],
      [{ url: 'http://127.0.0.1/x', events: [] }, 'events'],
      [{ url: 'http://127.0.0.1/x', events: ['contact.created', 'contact.exploded'] }, 'events'],
      [{ url: 'http://127.0.0.1/x', events: ['chatnet_account.qr'] }, 'events'],
      [{ url: 'http://127.0.0.1/x', events: ['chatnet.inbound'] }, 'events'],
      [{ url: 'http://127.0.0.1/x', events: ['webhook.test'] }, 'events'],
      [{ url: 'http://127.0.0.1/x', events: ['contact.créé'] }, 'events'],
      [{ url: 'http://127.0.0.1/x', events: 'contact.created' }, 'events'],
      [{ url: 'http://127.0.0.1/x', events: EVENTS, secret: 'hunter2' }, 'secret'],
      [{ url: 'http://127.0.0.1/x', events: EVENTS, secret: 'whsec_c2hvcnQ=' }, 'secret'],
      [{ url: 'http://10.0.0.1/x', events: EVENTS }, 'url'],
      [{ url: 'http://[::1]/x', events: EVENTS }, 'url'],
    ])('400 for %j, naming %s', async (input, field) => {
      const res = await owner.post('/api/v1/webhook-settings', input);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_argument');
      expect(res.body.error.details[0].field).toBe(field);
    });

    it('403 for an agent (settings:edit is needed)', async () => {
      const res = await agent.post('/api/v1/webhook-settings', { url: rx.url('/agent'), events: EVENTS });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    });

    it('401 without a token', async () => {
      expect((await api.post('/api/v1/webhook-settings', { url: rx.url('/x'), events: EVENTS })).status).toBe(401);
    });
  });

  describe('reading', () => {
    it("GET /webhook-settings lists the org's webhooks without any secret", async () => {
      const res = await owner.get('/api/v1/webhook-settings');
      expect(res.status).toBe(200);
      expect(res.body).toEqual([{ id, url: rx.url('/hook'), events: EVENTS, active: true, createdAt: expect.any(String) }]);
      expect(JSON.stringify(res.body)).not.toContain('whsec_');
    });

    it('an agent may not read the list or one webhook (403; see webhook-permissions.test.ts)', async () => {
      expect((await agent.get('/api/v1/webhook-settings')).status).toBe(403);
      expect((await agent.get(`/api/v1/webhook-settings/${id}`)).status).toBe(403);
    });

    it('GET /webhook-settings/:id returns it, never the secret', async () => {
      const res = await owner.get(`/api/v1/webhook-settings/${id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id,
        url: rx.url('/hook'),
        events: EVENTS,
        active: true,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        disabledAt: null,
        disabledReason: null,
      });
    });

    it('GET /webhook-settings/event-types lists the public event names', async () => {
      const res = await owner.get('/api/v1/webhook-settings/event-types');
      expect(res.status).toBe(200);
      expect(res.body.events).toEqual(
        expect.arrayContaining([
          'contact.created',
          'contact.updated',
          'message.received',
          'notification.created',
          'contact.note_created',
          'contact.note_updated',
          'contact.note_deleted',
          'appointment.updated',
          'appointment.deleted',
          'contact.merged',
          'contact.merge_undone',
          'task.created',
          'task.completed',
          'task.due',
        ]),
      );
      expect(res.body.events).not.toContain('chatnet_account.qr');
      expect(res.body.events).not.toContain('chatnet.inbound');
      // Exactly the events the schemas give a webhook payload (the catalogue the API docs are generated from).
      expect([...res.body.events].sort()).toEqual(publicEventTypes().sort());
    });

    it('404 for an unknown or malformed id', async () => {
      expect((await owner.get('/api/v1/webhook-settings/7d1f8a4e-0000-4000-8000-000000000000')).status).toBe(404);
      const res = await owner.get('/api/v1/webhook-settings/not-a-uuid');
      expect(res.status).toBe(404);
      expect(res.body.error).toEqual({ code: 'not_found', message: 'Webhook not found' });
    });
  });

  describe('POST /webhook-settings/:id/test', () => {
    it('sends a signed webhook.test event now and returns the attempt', async () => {
      const before = rx.at('/hook').length;
      const res = await owner.post(`/api/v1/webhook-settings/${id}/test`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        deliveryId: expect.any(String),
        eventId: expect.any(String),
        ok: true,
        statusCode: 200,
        durationMs: expect.any(Number),
        error: null,
        responseBody: 'ok',
        responseBodyTruncated: false,
      });
      const got = rx.at('/hook')[before];
      expect(got.json).toEqual({ type: 'webhook.test', timestamp: expect.any(String), data: { webhookId: id, message: expect.any(String) } });
      expect(got.id).toBe(res.body.eventId);
      expect(verifySignature(secret, got)).toBe(true);
      expect(verifySignature(`whsec_${Buffer.alloc(32).toString('base64')}`, got)).toBe(false);
    });

    it('reports a failing endpoint as a failed attempt (200 with ok false), body truncated in the log', async () => {
      rx.reply('/hook', { status: 503, body: 'e'.repeat(5000) });
      const res = await owner.post(`/api/v1/webhook-settings/${id}/test`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expect.objectContaining({ ok: false, statusCode: 503, error: 'HTTP 503', responseBodyTruncated: true }));
      expect(res.body.responseBody).toBe('e'.repeat(2048));
    });

    it('403 for an agent, 404 for an unknown id', async () => {
      expect((await agent.post(`/api/v1/webhook-settings/${id}/test`)).status).toBe(403);
      expect((await owner.post('/api/v1/webhook-settings/7d1f8a4e-0000-4000-8000-000000000000/test')).status).toBe(404);
    });
  });

  describe('GET /webhook-settings/:id/deliveries', () => {
    it('lists deliveries newest first with every attempt, paginated', async () => {
      const res = await owner.get(`/api/v1/webhook-settings/${id}/deliveries`);
      expect(res.status).toBe(200);
      expect(res.body.pagination).toEqual({ total: 2, page: 1, limit: 50, pages: 1 });
      const [failed, ok] = res.body.data;
      expect(ok).toEqual({
        id: expect.any(String),
        webhookId: id,
        eventId: expect.any(String),
        eventType: 'webhook.test',
        status: 'succeeded',
        attemptCount: 1,
        nextAttemptAt: null,
        lastStatusCode: 200,
        lastError: null,
        // A live delivery, not one of a replayed window (issue #31).
        replay: false,
        createdAt: expect.any(String),
        deliveredAt: expect.any(String),
        attempts: [
          {
            attempt: 1,
            trigger: 'test',
            startedAt: expect.any(String),
            durationMs: expect.any(Number),
            statusCode: 200,
            ok: true,
            error: null,
            responseBody: 'ok',
            responseBodyTruncated: false,
          },
        ],
      });
      expect(failed).toEqual(expect.objectContaining({ status: 'failed', lastStatusCode: 503, lastError: 'HTTP 503', deliveredAt: null }));
      expect(failed.attempts[0].responseBody).toHaveLength(2048);
    });

    it('pages, clamps the limit and filters by status', async () => {
      const page2 = await owner.get(`/api/v1/webhook-settings/${id}/deliveries?page=2&limit=1`);
      expect(page2.body.pagination).toEqual({ total: 2, page: 2, limit: 1, pages: 2 });
      expect(page2.body.data[0].status).toBe('succeeded');
      const clamped = await owner.get(`/api/v1/webhook-settings/${id}/deliveries?limit=1000`);
      expect(clamped.body.pagination.limit).toBe(100);
      const failed = await owner.get(`/api/v1/webhook-settings/${id}/deliveries?status=failed`);
      expect(failed.body.data.map((d: { status: string }) => d.status)).toEqual(['failed']);
    });

    it('400 for a non-numeric page or an unknown status; 404 for an unknown webhook', async () => {
      expect((await owner.get(`/api/v1/webhook-settings/${id}/deliveries?page=abc`)).body.error.details[0].field).toBe('page');
      expect((await owner.get(`/api/v1/webhook-settings/${id}/deliveries?status=lost`)).body.error.details[0].field).toBe('status');
      expect((await owner.get('/api/v1/webhook-settings/nope/deliveries')).status).toBe(404);
    });
  });

  describe('POST /webhook-settings/deliveries/:deliveryId/redeliver', () => {
    it('queues one more attempt of a failed delivery (202) which is then logged as manual', async () => {
      const log = await owner.get(`/api/v1/webhook-settings/${id}/deliveries?status=failed`);
      const deliveryId = log.body.data[0].id;
      const before = rx.at('/hook').length;
      const res = await owner.post(`/api/v1/webhook-settings/deliveries/${deliveryId}/redeliver`);
      expect(res.status).toBe(202);
      expect(res.body).toEqual(expect.objectContaining({ id: deliveryId, status: 'pending', attemptCount: 1 }));
      const done = await waitFor(async () => {
        const d = (await owner.get(`/api/v1/webhook-settings/${id}/deliveries`)).body.data.find((x: { id: string }) => x.id === deliveryId);
        return d.status === 'succeeded' && d;
      });
      expect(done.attempts.map((a: { trigger: string; ok: boolean }) => [a.trigger, a.ok])).toEqual([
        ['test', false],
        ['manual', true],
      ]);
      // The same message: same webhook-id, freshly signed.
      const again = rx.at('/hook')[before];
      expect(again.id).toBe(done.eventId);
      expect(verifySignature(secret, again)).toBe(true);
    });

    it('403 for an agent, 404 for an unknown or malformed delivery id', async () => {
      const deliveryId = (await owner.get(`/api/v1/webhook-settings/${id}/deliveries`)).body.data[0].id;
      expect((await agent.post(`/api/v1/webhook-settings/deliveries/${deliveryId}/redeliver`)).status).toBe(403);
      expect((await owner.post('/api/v1/webhook-settings/deliveries/7d1f8a4e-0000-4000-8000-000000000000/redeliver')).status).toBe(404);
      expect((await owner.post('/api/v1/webhook-settings/deliveries/xyz/redeliver')).status).toBe(404);
    });
  });

  describe('another organization', () => {
    it('sees none of it: list empty, every id 404', async () => {
      expect((await otherOrg.get('/api/v1/webhook-settings')).body).toEqual([]);
      const deliveryId = (await owner.get(`/api/v1/webhook-settings/${id}/deliveries`)).body.data[0].id;
      const calls = [
        otherOrg.get(`/api/v1/webhook-settings/${id}`),
        otherOrg.put(`/api/v1/webhook-settings/${id}`, { active: false }),
        otherOrg.post(`/api/v1/webhook-settings/${id}/test`),
        otherOrg.get(`/api/v1/webhook-settings/${id}/deliveries`),
        otherOrg.post(`/api/v1/webhook-settings/deliveries/${deliveryId}/redeliver`),
        otherOrg.del(`/api/v1/webhook-settings/${id}`),
      ];
      for (const res of await Promise.all(calls)) {
        expect(res.status).toBe(404);
      }
      expect((await owner.get(`/api/v1/webhook-settings/${id}`)).body.active).toBe(true);
    });
  });

  describe('PUT /webhook-settings/:id', () => {
    it('changes only the fields sent', async () => {
      const res = await owner.put(`/api/v1/webhook-settings/${id}`, { events: ['contact.deleted', 'contact.deleted', 'appointment.created'] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        expect.objectContaining({ id, url: rx.url('/hook'), events: ['contact.deleted', 'appointment.created'], active: true }),
      );
      const moved = await owner.put(`/api/v1/webhook-settings/${id}`, { url: rx.url('/moved') });
      expect(moved.body).toEqual(expect.objectContaining({ url: rx.url('/moved'), events: ['contact.deleted', 'appointment.created'] }));
    });

    it('rotates the secret: later deliveries are signed with the new one', async () => {
      const next = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
      const res = await owner.put(`/api/v1/webhook-settings/${id}`, { secret: next });
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).not.toContain('whsec_');
      await owner.post(`/api/v1/webhook-settings/${id}/test`);
      const got = rx.at('/moved').at(-1)!;
      expect(verifySignature(next, got)).toBe(true);
      expect(verifySignature(secret, got)).toBe(false);
    });

    it('deactivates and re-activates', async () => {
      const off = await owner.put(`/api/v1/webhook-settings/${id}`, { active: false });
      expect(off.body).toEqual(expect.objectContaining({ active: false, disabledAt: expect.any(String), disabledReason: 'deactivated by a user' }));
      const deliveryId = (await owner.get(`/api/v1/webhook-settings/${id}/deliveries`)).body.data[0].id;
      const refused = await owner.post(`/api/v1/webhook-settings/deliveries/${deliveryId}/redeliver`);
      expect(refused.status).toBe(422);
      expect(refused.body.error.code).toBe('webhook_inactive');
      const on = await owner.put(`/api/v1/webhook-settings/${id}`, { active: true });
      expect(on.body).toEqual(expect.objectContaining({ active: true, disabledAt: null, disabledReason: null }));
    });

    it.each([
      [{ url: 'nope' }, 'url'],
      [{ url: 'http://169.254.169.254/latest/meta-data' }, 'url'],
      [{ events: [] }, 'events'],
      [{ events: ['contact.exploded'] }, 'events'],
      [{ secret: 'plain' }, 'secret'],
      [{ secret: '' }, 'secret'],
      [{ active: 'yes' }, 'active'],
    ])('400 for %j', async (input, field) => {
      const res = await owner.put(`/api/v1/webhook-settings/${id}`, input);
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe(field);
    });

    it('403 for an agent, 404 for an unknown id', async () => {
      expect((await agent.put(`/api/v1/webhook-settings/${id}`, { active: false })).status).toBe(403);
      expect((await owner.put('/api/v1/webhook-settings/7d1f8a4e-0000-4000-8000-000000000000', { active: false })).status).toBe(404);
    });
  });

  describe('DELETE /webhook-settings/:id', () => {
    it('403 for an agent', async () => {
      expect((await agent.del(`/api/v1/webhook-settings/${id}`)).status).toBe(403);
    });

    it('deletes (204) while an attempt of the endpoint is being recorded (the worker locks the delivery, then the endpoint: the opposite order)', async () => {
      const hook = await owner.post('/api/v1/webhook-settings', { url: rx.url('/recording'), events: ['contact.deleted'] });
      expect(hook.status).toBe(201);
      expect((await owner.post(`/api/v1/webhook-settings/${hook.body.id}/test`)).status).toBe(200);
      // What recording a failed attempt does in one transaction (deliveries.recordFailure, then webhooks.recordFailure),
      // held open between its two steps while the endpoint is deleted: a deadlock, whose victim is the delete (it
      // waited first, so its deadlock check runs first). The delete is run again and succeeds once the worker commits.
      const worker = await connectPatiently(stack.databaseUrl('webhooks'));
      try {
        await worker.query('BEGIN');
        await worker.query('UPDATE webhook_deliveries SET updated_at = now() WHERE webhook_id = $1', [hook.body.id]);
        const deleted = owner.del(`/api/v1/webhook-settings/${hook.body.id}`);
        // Read afresh: this transaction's first read of pg_stat_activity would otherwise be kept (support/server-activity).
        await waitFor(
          async () =>
            (await activityNow(worker, `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).length ===
            1,
        );
        await worker.query('UPDATE webhook_settings SET failing_since = coalesce(failing_since, now()) WHERE id = $1', [hook.body.id]);
        await worker.query('COMMIT');
        expect((await deleted).status).toBe(204);
      } finally {
        await worker.end();
      }
      expect((await owner.get(`/api/v1/webhook-settings/${hook.body.id}`)).status).toBe(404);
    });

    it('deletes (204) with its log; then it is 404', async () => {
      expect((await owner.del(`/api/v1/webhook-settings/${id}`)).status).toBe(204);
      expect((await owner.get(`/api/v1/webhook-settings/${id}`)).status).toBe(404);
      expect((await owner.get(`/api/v1/webhook-settings/${id}/deliveries`)).status).toBe(404);
      expect((await owner.del(`/api/v1/webhook-settings/${id}`)).status).toBe(404);
      expect((await owner.get('/api/v1/webhook-settings')).body).toEqual([]);
    });
  });
});

async function waitFor<T>(fn: () => Promise<T | false | undefined>, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}
