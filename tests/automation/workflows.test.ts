import { createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as PgClient } from 'pg';
import { eventually } from '@crm/testing';
import { ConsumerProbe } from '../support/consumers';
import { client, type Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeCrm, fakeMessaging, member, messageData, org } from './support';

// Workflows (issue #32 items 1 and 3), end to end through the gateway: if steps (nested) branching both ways, a wait
// that outlives a restart of automation, http_request steps against a local receiver (signature checked, the answer
// used by later steps) and refused for private addresses, 400s naming the path of the bad step, and the run history
// (list, filter, paging, one run, another org's 404, exactly once per event, the 30-day sweep).

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A team's own system: records every request; `/tickets` opens a ticket (201) unless the text says "fail" (503). */
async function receiver() {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      got.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const failing = body.includes('fail');
      res.writeHead(failing ? 503 : 201, { 'content-type': 'application/json' });
      res.end(JSON.stringify(failing ? { error: 'busy' } : { ticket: { id: `T-${got.length}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { got, port, url: (path: string) => `http://127.0.0.1:${port}${path}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** The Standard Webhooks check a receiver makes: v1 HMAC-SHA256 of "id.timestamp.body" with the secret's key. */
function signedBy(secret: string, r: Received): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.body}`).digest('base64');
  return r.headers['webhook-signature'] === `v1,${expected}`;
}

describe('automation workflows', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let messaging: Awaited<ReturnType<typeof fakeMessaging>>;
  let hook: Awaited<ReturnType<typeof receiver>>;
  let owner: Client;
  let orgId: string;
  let agent: Client;
  let other: Awaited<ReturnType<typeof org>>;
  let triggers: ConsumerProbe;

  beforeAll(async () => {
    crm = await fakeCrm();
    messaging = await fakeMessaging();
    hook = await receiver();
    stack = await startStack({
      services: ['automation'],
      serviceEnv: {
        automation: {
          CRM_ADDR: crm.addr,
          MESSAGING_ADDR: messaging.addr,
          // The local receiver; every other private address stays refused.
          AUTOMATION_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1',
          RUN_RETRY_SCHEDULE: '200ms,200ms',
          EVENT_RETRY_SCHEDULE: '200ms',
        },
      },
    });
    bus = await eventBus(stack);
    triggers = new ConsumerProbe(stack, 'automation', `${stack.env.EVENTS_EXCHANGE}.automation.triggers`);
    const a = await org(stack, 'Acme');
    owner = a.owner;
    orgId = a.orgId;
    agent = (await member(stack, owner, 'agent')).api;
    other = await org(stack, 'Other');
  });
  afterAll(async () => {
    await bus?.close();
    await stack?.stop();
    await crm?.stop();
    await messaging?.stop();
    await hook?.close();
  });

  async function activeRule(body: object): Promise<{ id: string; secret: string }> {
    const created = await owner.post('/api/v1/automation/rules', body);
    if (created.status !== 201) throw new Error(`rule create failed: ${JSON.stringify(created.body)}`);
    const act = await owner.post(`/api/v1/automation/rules/${created.body.id}/activate`);
    if (act.status !== 200) throw new Error(`activate failed: ${JSON.stringify(act.body)}`);
    return { id: created.body.id, secret: created.body.secret };
  }
  const runsOf = async (ruleId: string, query = '') => (await owner.get(`/api/v1/automation/rules/${ruleId}/runs${query}`)).body;
  const finishedRuns = (ruleId: string, count: number) =>
    eventually(async () => {
      const done = (await runsOf(ruleId)).data.filter((r: any) => ['succeeded', 'failed', 'cancelled'].includes(r.status));
      return done.length >= count ? done : undefined;
    });
  const sentTo = (conversationId: string) =>
    messaging
      .messages()
      .filter((m) => m.conversationId === conversationId)
      .map((m) => m.content);
  const pathsOf = (run: any) => run.steps.map((s: any) => (s.branch ? `${s.path}→${s.branch}` : s.path));

  describe('if steps', () => {
    let ruleId: string;
    const convs = { vip: randomUUID(), plain: randomUUID(), other: randomUUID() };
    const people = {} as Record<keyof typeof convs, string>;

    beforeAll(async () => {
      ruleId = (
        await activeRule({
          name: 'Price questions',
          trigger: { type: 'message_received', conditions: [{ field: 'content', operator: 'contains', value: 'wf-branch' }] },
          actions: [
            {
              type: 'if',
              conditions: [{ field: 'content', operator: 'contains', value: 'price' }],
              then: [
                {
                  type: 'if',
                  conditions: [{ field: 'contact.tags', operator: 'contains', value: 'vip' }],
                  then: [{ type: 'send_message', template: 'VIP price for {{name}}' }],
                  else: [{ type: 'send_message', template: 'Price list' }],
                },
              ],
              else: [{ type: 'add_tag', tag: 'no-price' }],
            },
            { type: 'send_message', template: 'Thanks' },
          ],
        })
      ).id;
      people.vip = crm.add(orgId, { name: 'Vy', tags: ['vip'] }).id;
      people.plain = crm.add(orgId, { name: 'Phong' }).id;
      people.other = crm.add(orgId, { name: 'Oanh' }).id;
      await bus.publish('message.received', orgId, messageData(people.vip, convs.vip, 'wf-branch what is the price?'));
      await bus.publish('message.received', orgId, messageData(people.plain, convs.plain, 'wf-branch price please'));
      await bus.publish('message.received', orgId, messageData(people.other, convs.other, 'wf-branch hello'));
      await finishedRuns(ruleId, 3);
    });

    it('go to then when the conditions hold and to else when they do not, nested ifs included', async () => {
      expect(sentTo(convs.vip)).toEqual(['VIP price for Vy', 'Thanks']);
      expect(sentTo(convs.plain)).toEqual(['Price list', 'Thanks']);
      expect(sentTo(convs.other)).toEqual(['Thanks']);
      expect(crm.patches.filter((p) => p.addTags.includes('no-price')).map((p) => p.id)).toEqual([people.other]);

      const runs = (await runsOf(ruleId)).data;
      const byContact = Object.fromEntries(runs.map((r: any) => [r.contactId, r]));
      expect(pathsOf(byContact[people.vip])).toEqual(['actions.0→then', 'actions.0.then.0→then', 'actions.0.then.0.then.0', 'actions.1']);
      expect(pathsOf(byContact[people.plain])).toEqual(['actions.0→then', 'actions.0.then.0→else', 'actions.0.then.0.else.0', 'actions.1']);
      expect(pathsOf(byContact[people.other])).toEqual(['actions.0→else', 'actions.0.else.0', 'actions.1']);
      expect(byContact[people.plain]).toEqual(
        expect.objectContaining({ trigger: 'message_received', conversationId: convs.plain, status: 'succeeded', finishedAt: expect.any(String) }),
      );
      for (const step of byContact[people.plain].steps)
        expect(step).toEqual(
          expect.objectContaining({ status: 'succeeded', error: null, startedAt: expect.any(String), finishedAt: expect.any(String) }),
        );
    });

    it('the run history lists, filters and pages runs, and shows one run by id', async () => {
      const all = await runsOf(ruleId);
      expect(all.pagination).toEqual({ total: 3, page: 1, limit: 50, pages: 1 });
      const second = await runsOf(ruleId, '?limit=1&page=2');
      expect(second.pagination).toEqual({ total: 3, page: 2, limit: 1, pages: 3 });
      expect(second.data.map((r: any) => r.id)).toEqual([all.data[1].id]);
      expect((await runsOf(ruleId, '?status=succeeded')).pagination.total).toBe(3);
      expect((await runsOf(ruleId, '?status=failed')).data).toEqual([]);

      const one = await owner.get(`/api/v1/automation/runs/${all.data[0].id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(all.data[0]);
      // Any user of the org may read it.
      expect((await agent.get(`/api/v1/automation/runs/${all.data[0].id}`)).status).toBe(200);
    });

    it('run history: 400 naming the bad query field, 401 without a token, 404 for another org', async () => {
      for (const [query, field] of [
        ['?status=done', 'status'],
        ['?page=abc', 'page'],
        ['?limit=1.5', 'limit'],
      ]) {
        const res = await owner.get(`/api/v1/automation/rules/${ruleId}/runs${query}`);
        expect(res.status).toBe(400);
        expect(res.body.error.details.map((d: any) => d.field)).toContain(field);
      }
      const runId = (await runsOf(ruleId)).data[0].id;
      const anonymous = client(stack.url);
      expect((await anonymous.get(`/api/v1/automation/rules/${ruleId}/runs`)).status).toBe(401);
      expect((await anonymous.get(`/api/v1/automation/runs/${runId}`)).status).toBe(401);
      expect((await other.owner.get(`/api/v1/automation/rules/${ruleId}/runs`)).status).toBe(404);
      expect((await other.owner.get(`/api/v1/automation/runs/${runId}`)).status).toBe(404);
      expect((await owner.get(`/api/v1/automation/runs/${randomUUID()}`)).status).toBe(404);
      expect((await owner.get('/api/v1/automation/runs/not-a-run')).status).toBe(404);
    });

    it('POST /rules/:id/run starts a run by hand (202 {runId}): conditions of the trigger are not judged, if steps are', async () => {
      const conversationId = randomUUID();
      const res = await owner.post(`/api/v1/automation/rules/${ruleId}/run`, { contactId: people.vip, conversationId });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ runId: expect.any(String) });
      const run = await eventually(async () => {
        const r = (await owner.get(`/api/v1/automation/runs/${res.body.runId}`)).body;
        return r.status === 'succeeded' ? r : undefined;
      });
      // No message content on a manual run: "price" is not there, so the else branch; contact.* came from crm.
      expect(run).toEqual(expect.objectContaining({ trigger: 'manual', contactId: people.vip, conversationId }));
      expect(pathsOf(run)).toEqual(['actions.0→else', 'actions.0.else.0', 'actions.1']);
      expect(sentTo(conversationId)).toEqual(['Thanks']);
      expect(crm.patches.filter((p) => p.id === people.vip && p.addTags.includes('no-price'))).toHaveLength(1);
      // Each call is a run of its own.
      const again = await owner.post(`/api/v1/automation/rules/${ruleId}/run`, { contactId: people.vip, conversationId });
      expect(again.status).toBe(202);
      expect(again.body.runId).not.toBe(res.body.runId);
      await finishedRuns(ruleId, 5);
    });

    it('POST /rules/:id/run: 400 naming the field, 403 for agents, 404 for another org, 422 for a rule that is not active', async () => {
      for (const [body, field] of [
        [{ contactId: 'nope' }, 'contactId'],
        [{ contactId: randomUUID() }, 'contactId'],
        [{ conversationId: 'nope' }, 'conversationId'],
        [{ contactId: 5 }, 'contactId'],
      ] as const) {
        const res = await owner.post(`/api/v1/automation/rules/${ruleId}/run`, body);
        expect(res.status).toBe(400);
        expect(res.body.error.details[0].field).toBe(field);
      }
      expect((await agent.post(`/api/v1/automation/rules/${ruleId}/run`, {})).status).toBe(403);
      expect((await other.owner.post(`/api/v1/automation/rules/${ruleId}/run`, {})).status).toBe(404);
      const draft = await owner.post('/api/v1/automation/rules', {
        name: 'Draft',
        trigger: { type: 'message_received' },
        actions: [{ type: 'add_tag', tag: 'x' }],
      });
      const res = await owner.post(`/api/v1/automation/rules/${draft.body.id}/run`, {});
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('invalid_state');
    });

    it('a finished run leaves the history once it is past the retention (30 days), swept by the timer facility', async () => {
      const [oldest] = (await runsOf(ruleId)).data.slice(-1);
      const db = new PgClient({ connectionString: stack.databaseUrl('automation') });
      await db.connect();
      try {
        await db.query(`UPDATE rule_runs SET finished_at = now() - interval '31 days' WHERE id = $1`, [oldest.id]);
        // The sweeper slept until the oldest run's time 30 days on; an earlier one written behind its back wakes it.
        await db.query(`SELECT pg_notify('automation_run_log', '')`);
      } finally {
        await db.end();
      }
      await eventually(async () => (await owner.get(`/api/v1/automation/runs/${oldest.id}`)).status === 404 || undefined);
      expect((await runsOf(ruleId)).data.map((r: any) => r.id)).not.toContain(oldest.id);
    });
  });

  describe('http_request steps', () => {
    let rule: { id: string; secret: string };

    beforeAll(async () => {
      rule = await activeRule({
        name: 'Open a ticket',
        trigger: { type: 'message_received', conditions: [{ field: 'content', operator: 'contains', value: 'wf-ticket' }] },
        actions: [
          {
            type: 'http_request',
            url: hook.url('/tickets?source=crm'),
            method: 'POST',
            headers: { 'x-team': 'sales' },
            bodyTemplate: '{"contactId": "{{contact.id}}", "text": "{{message}}"}',
          },
          {
            type: 'if',
            conditions: [{ field: 'steps.0.status', operator: 'equals', value: 201 }],
            then: [{ type: 'send_message', template: 'Ticket {{steps.0.body.ticket.id}} opened ({{steps.0.status}})' }],
            else: [{ type: 'send_message', template: 'No ticket: {{steps.0.status}}' }],
          },
        ],
      });
    });

    it('sends a signed request and later steps use its status and JSON body', async () => {
      expect(rule.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      const contact = crm.add(orgId, { name: 'Tú' });
      const conversationId = randomUUID();
      const before = hook.got.length;
      await bus.publish('message.received', orgId, messageData(contact.id, conversationId, 'wf-ticket my order is late'));
      const [run] = await finishedRuns(rule.id, 1);
      expect(run.status).toBe('succeeded');
      expect(pathsOf(run)).toEqual(['actions.0', 'actions.1→then', 'actions.1.then.0']);

      const got = hook.got.slice(before);
      expect(got).toHaveLength(1);
      const [req] = got;
      expect(req.method).toBe('POST');
      expect(req.url).toBe('/tickets?source=crm');
      expect(req.headers['x-team']).toBe('sales');
      expect(req.headers['content-type']).toBe('application/json');
      expect(JSON.parse(req.body)).toEqual({ contactId: contact.id, text: 'wf-ticket my order is late' });
      expect(signedBy(rule.secret, req)).toBe(true);
      expect(sentTo(conversationId)).toEqual([`Ticket T-${before + 1} opened (201)`]);
    });

    it('an answer that is not a success is the step’s answer too: the if takes its else', async () => {
      const contact = crm.add(orgId);
      const conversationId = randomUUID();
      await bus.publish('message.received', orgId, messageData(contact.id, conversationId, 'wf-ticket fail please'));
      await eventually(async () => sentTo(conversationId).length > 0 || undefined);
      expect(sentTo(conversationId)).toEqual(['No ticket: 503']);
    });

    it('a redelivered event (same id) starts one run and makes one request', async () => {
      const contact = crm.add(orgId);
      const conversationId = randomUUID();
      const data = messageData(contact.id, conversationId, 'wf-ticket once');
      const eventId = randomUUID();
      const before = hook.got.length;
      const runsBefore = (await runsOf(rule.id)).pagination.total;
      const mark = await triggers.mark();
      await bus.publish('message.received', orgId, data, eventId);
      await bus.publish('message.received', orgId, data, eventId);
      await triggers.settled(mark, 2);
      await eventually(async () => sentTo(conversationId).length > 0 || undefined);
      await bus.publish('message.received', orgId, data, eventId);
      await triggers.settled(mark, 3);
      const runs = (await runsOf(rule.id)).data.filter((r: any) => r.eventId === eventId);
      expect(runs).toHaveLength(1);
      expect((await runsOf(rule.id)).pagination.total).toBe(runsBefore + 1);
      expect(hook.got.slice(before).filter((r) => r.body.includes('wf-ticket once'))).toHaveLength(1);
      expect(sentTo(conversationId)).toHaveLength(1);
    });

    it('the secret is shown on create and by rotate-secret only; a rotated secret signs the next request', async () => {
      const read = await owner.get(`/api/v1/automation/rules/${rule.id}`);
      expect(read.body).not.toHaveProperty('secret');
      const list = await owner.get('/api/v1/automation/rules');
      expect(list.body.data.find((r: any) => r.id === rule.id)).not.toHaveProperty('secret');
      expect(JSON.stringify(list.body)).not.toContain(rule.secret);

      expect((await agent.post(`/api/v1/automation/rules/${rule.id}/rotate-secret`)).status).toBe(403);
      expect((await other.owner.post(`/api/v1/automation/rules/${rule.id}/rotate-secret`)).status).toBe(404);
      const rotated = await owner.post(`/api/v1/automation/rules/${rule.id}/rotate-secret`);
      expect(rotated.status).toBe(200);
      expect(rotated.body).toEqual({ secret: expect.stringMatching(/^whsec_/) });
      expect(rotated.body.secret).not.toBe(rule.secret);

      const contact = crm.add(orgId);
      const before = hook.got.length;
      await bus.publish('message.received', orgId, messageData(contact.id, randomUUID(), 'wf-ticket after rotation'));
      const req: Received = await eventually(async () => hook.got.slice(before).find((r) => r.body.includes('after rotation')));
      expect(signedBy(rotated.body.secret, req)).toBe(true);
      expect(signedBy(rule.secret, req)).toBe(false);
    });

    it('no answer (nothing listens) is retried, then fails the run with the step’s error', async () => {
      const closed = await receiver();
      const deadUrl = closed.url('/gone');
      await closed.close();
      const dead = await activeRule({
        name: 'Dead end',
        trigger: { type: 'message_received', conditions: [{ field: 'content', operator: 'contains', value: 'wf-dead' }] },
        actions: [
          { type: 'http_request', url: deadUrl, method: 'GET' },
          { type: 'send_message', template: 'never' },
        ],
      });
      await bus.publish('message.received', orgId, messageData(crm.add(orgId).id, randomUUID(), 'wf-dead'));
      const [run] = await finishedRuns(dead.id, 1);
      expect(run).toEqual(expect.objectContaining({ status: 'failed', attempts: 3, error: expect.stringContaining('actions.0 http_request') }));
      expect(run.steps).toEqual([
        expect.objectContaining({ path: 'actions.0', type: 'http_request', status: 'failed', error: expect.stringContaining('ECONNREFUSED') }),
      ]);
      expect((await runsOf(dead.id, '?status=failed')).pagination.total).toBe(1);
      expect((await runsOf(dead.id, '?status=succeeded')).pagination.total).toBe(0);
    });

    it('a private or loopback address that is not allow-listed is refused when the rule is saved', async () => {
      for (const [url, nested] of [
        ['http://10.0.0.7/hook', true],
        ['http://[::1]:8080/hook', false],
        ['http://169.254.169.254/latest/meta-data', false],
      ] as const) {
        const step = { type: 'http_request', url };
        const res = await owner.post('/api/v1/automation/rules', {
          name: 'SSRF',
          trigger: { type: 'message_received' },
          actions: nested ? [{ type: 'if', conditions: [{ field: 'content', operator: 'contains', value: 'x' }], then: [step] }] : [step],
        });
        expect(res.status).toBe(400);
        expect(res.body.error.details[0].field).toBe(nested ? 'actions.0.then.0.url' : 'actions.0.url');
        expect(res.body.error.details[0].message).toMatch(/address/);
      }
    });
  });

  describe('wait', () => {
    it('given in minutes, resumes on time after the automation service restarts', async () => {
      const { id } = await activeRule({
        name: 'Later',
        trigger: { type: 'message_received', conditions: [{ field: 'content', operator: 'contains', value: 'wf-wait' }] },
        actions: [
          { type: 'wait', minutes: 0.1 },
          { type: 'send_message', template: 'Back after the wait' },
        ],
      });
      const conversationId = randomUUID();
      await bus.publish('message.received', orgId, messageData(crm.add(orgId).id, conversationId, 'wf-wait'));
      const waiting = await eventually(async () => (await runsOf(id)).data.find((r: any) => r.status === 'waiting'));
      expect(waiting.steps).toEqual([expect.objectContaining({ path: 'actions.0', type: 'wait', status: 'waiting', finishedAt: null })]);
      const resumeAt = Date.parse(waiting.resumeAt);

      await stack.restart('automation');
      const restartedAt = Date.now();
      expect(sentTo(conversationId)).toEqual([]);
      await eventually(async () => sentTo(conversationId).length > 0 || undefined, 15_000);
      const [run] = await finishedRuns(id, 1);
      expect(run.status).toBe('succeeded');
      expect(sentTo(conversationId)).toEqual(['Back after the wait']);
      expect(run.steps.map((s: any) => [s.path, s.status])).toEqual([
        ['actions.0', 'succeeded'],
        ['actions.1', 'succeeded'],
      ]);
      // Resumed within 2 s of the time it fell due (or of the restart, had it fallen due while automation was down).
      const resumed = Date.parse(run.steps[1].startedAt);
      expect(resumed).toBeGreaterThanOrEqual(resumeAt);
      expect(resumed - Math.max(resumeAt, restartedAt)).toBeLessThan(2_000);
    });
  });

  describe('invalid definitions', () => {
    const ifStep = (then: object[], extra: object = {}) => ({
      type: 'if',
      conditions: [{ field: 'content', operator: 'contains', value: 'x' }],
      then,
      ...extra,
    });
    const nested = (levels: number): object => (levels === 0 ? { type: 'send_message', template: 'deep' } : ifStep([nested(levels - 1)]));

    it.each<[string, object[], string]>([
      ['an http_request without url, inside then', [{ type: 'add_tag', tag: 'a' }, ifStep([{ type: 'http_request' }])], 'actions.1.then.0.url'],
      ['an http_request with a url that is not http', [{ type: 'http_request', url: 'ftp://example.com/x' }], 'actions.0.url'],
      ['an http_request with an unknown method', [{ type: 'http_request', url: 'https://example.com/x', method: 'TRACE' }], 'actions.0.method'],
      [
        'an http_request setting its own signature',
        [{ type: 'http_request', url: 'https://example.com/x', headers: { 'webhook-signature': 'v1,forged' } }],
        'actions.0.headers.webhook-signature',
      ],
      ['a GET with a body', [{ type: 'http_request', url: 'https://example.com/x', method: 'GET', bodyTemplate: '{}' }], 'actions.0.bodyTemplate'],
      ['an if without conditions', [{ type: 'if', then: [{ type: 'add_tag', tag: 'a' }] }], 'actions.0.conditions'],
      [
        'an if with an unknown field',
        [ifStep([{ type: 'add_tag', tag: 'a' }], { conditions: [{ field: 'nope', operator: 'equals', value: 1 }] })],
        'actions.0.conditions.0.field',
      ],
      ['an if with nothing in then or else', [ifStep([])], 'actions.0.then'],
      ['a bad step inside else', [ifStep([{ type: 'add_tag', tag: 'a' }], { else: [{ type: 'teleport' }] })], 'actions.0.else.0.type'],
      ['ifs nested six levels deep', [nested(6)], 'actions.0.then.0.then.0.then.0.then.0.then.0.type'],
      ['a wait with both minutes and duration', [{ type: 'wait', minutes: 5, duration: '5m' }], 'actions.0.minutes'],
      ['a wait of no time', [{ type: 'wait', minutes: 0 }], 'actions.0.minutes'],
      ['then that is not a list', [{ type: 'if', conditions: [], then: 'x' }], 'actions.0.then'],
      ['minutes that are not a number', [{ type: 'wait', minutes: 'ten' }], 'actions.0.minutes'],
    ])('%s → 400 naming the bad step', async (_, actions, field) => {
      const res = await owner.post('/api/v1/automation/rules', { name: 'Bad', trigger: { type: 'message_received' }, actions });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe(field);
      // Replacing a rule's actions is checked the same way.
      const created = await owner.post('/api/v1/automation/rules', { name: 'Good', trigger: { type: 'message_received' }, actions: [] });
      const put = await owner.put(`/api/v1/automation/rules/${created.body.id}`, { actions });
      expect(put.status).toBe(400);
      expect(put.body.error.details[0].field).toBe(field);
    });

    it('steps.<n> fields belong to if steps, not to the trigger', async () => {
      const res = await owner.post('/api/v1/automation/rules', {
        name: 'Bad',
        trigger: { type: 'message_received', conditions: [{ field: 'steps.0.status', operator: 'equals', value: 200 }] },
        actions: [{ type: 'add_tag', tag: 'a' }],
      });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('trigger.conditions.0.field');
    });

    it('five levels of if are allowed, and read back as written', async () => {
      const actions = [nested(5), { type: 'wait', minutes: 1.5 }];
      const res = await owner.post('/api/v1/automation/rules', { name: 'Deep', trigger: { type: 'message_received' }, actions });
      expect(res.status).toBe(201);
      const read = await owner.get(`/api/v1/automation/rules/${res.body.id}`);
      // An if without else reads back with an empty one.
      const withElse = (a: any): any => (a.type === 'if' ? { ...a, then: a.then.map(withElse), else: (a.else ?? []).map(withElse) } : a);
      expect(read.body.actions).toEqual(actions.map(withElse));
    });
  });
});
