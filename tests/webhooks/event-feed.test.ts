import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import * as gateway from '@crm/gateway';
import { createLogger } from '@crm/logger';
import { eventually, freePort } from '@crm/testing';
import * as webhooksService from '@crm/webhooks';
import { client, email, type Client } from '../support/http';
import { orgWithKey } from '../messaging/support';
import { startStack, type Stack } from '../support/stack';
import { sample, startProducer, startReceiver, type Receiver } from './support';

// The event feed (issue #31): GET /api/public/events (API key) and GET /api/v1/events (owners, admins) read the public
// events the webhooks service consumed, oldest first, with the id, type and data a webhook delivery carries; cursors,
// a types filter, retention (410) and long-polling woken by PostgreSQL NOTIFY.
describe('the event feed', () => {
  let stack: Stack;
  let producer: Awaited<ReturnType<typeof startProducer>>;
  let rx: Receiver;
  let a: Awaited<ReturnType<typeof orgWithKey>>;
  let b: Awaited<ReturnType<typeof orgWithKey>>;
  let db: PgClient;
  /** Org A's events emitted by the first test, in order. */
  let emitted: { id: string; type: string }[] = [];

  beforeAll(async () => {
    stack = await startStack({ services: ['webhooks'], serviceEnv: { webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1' } } });
    producer = await startProducer(stack.env.EVENTS_EXCHANGE);
    rx = await startReceiver();
    a = await orgWithKey(stack.url, 'Feed A');
    b = await orgWithKey(stack.url, 'Feed B');
    db = new PgClient({ connectionString: stack.databaseUrl('webhooks') });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await rx?.close();
    await producer?.close();
    await stack?.stop();
  });

  /** Every page of a feed from the start (or `after`), following nextCursor until an empty page. */
  async function readAll(api: Client, query = '', after?: string) {
    const events: any[] = [];
    let cursor = after;
    for (let i = 0; i < 50; i++) {
      const res = await api.get(`/api/public/events?${query}${cursor ? `&after=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      expect(typeof res.body.nextCursor).toBe('string');
      cursor = res.body.nextCursor;
      if (res.body.events.length === 0) return { events, cursor: cursor! };
      events.push(...res.body.events);
    }
    throw new Error('the feed did not end');
  }

  /** Waits until `n` of org A's events are in the feed (the consumer has appended them). */
  const feedHas = (api: Client, n: number) => eventually(async () => ((await readAll(api)).events.length >= n ? true : undefined), 15_000);

  it('GET /api/public/events: oldest first, paged by cursor, with the id, type and data each webhook delivery carried', async () => {
    const hook = await a.owner.post('/api/v1/webhook-settings', { url: rx.url('/a'), events: ['contact.created', 'message.received'] });
    expect(hook.status).toBe(201);
    const made = await producer.emitMany([
      { type: 'contact.created', orgId: a.orgId, data: sample('contact.created') },
      { type: 'message.received', orgId: a.orgId, data: sample('message.received') },
      { type: 'contact.created', orgId: a.orgId, data: sample('contact.created') },
    ]);
    const more = await producer.emitMany([
      { type: 'message.received', orgId: a.orgId, data: sample('message.received') },
      { type: 'contact.updated', orgId: a.orgId, data: sample('contact.updated') },
    ]);
    emitted = [...made, ...more].map((e) => ({ id: e.id, type: e.type }));
    await feedHas(a.pub, 5);
    // contact.updated has no endpoint: it is in the feed all the same (the feed keeps every public event).
    await eventually(async () => (rx.at('/a').length >= 4 ? true : undefined), 15_000);

    const page1 = await a.pub.get('/api/public/events?limit=2');
    expect(page1.status).toBe(200);
    expect(page1.body.events.map((e: any) => e.id)).toEqual(emitted.slice(0, 2).map((e) => e.id));
    const page2 = await a.pub.get(`/api/public/events?limit=2&after=${page1.body.nextCursor}`);
    expect(page2.body.events.map((e: any) => e.id)).toEqual(emitted.slice(2, 4).map((e) => e.id));
    const page3 = await a.pub.get(`/api/public/events?limit=2&after=${page2.body.nextCursor}`);
    expect(page3.body.events.map((e: any) => e.id)).toEqual(emitted.slice(4).map((e) => e.id));
    // The end: an empty page still has a cursor, and polling with it later returns what came since.
    const end = await a.pub.get(`/api/public/events?limit=2&after=${page3.body.nextCursor}`);
    expect(end.body).toEqual({ events: [], nextCursor: expect.any(String) });

    const all = [...page1.body.events, ...page2.body.events, ...page3.body.events];
    expect(all.map((e: any) => e.type)).toEqual(emitted.map((e) => e.type));
    for (const delivered of rx.at('/a')) {
      const inFeed = all.find((e: any) => e.id === delivered.id);
      expect(inFeed).toEqual({ id: delivered.id, type: delivered.json.type, occurredAt: delivered.json.timestamp, data: delivered.json.data });
    }
    expect(
      rx
        .at('/a')
        .map((r) => r.id)
        .sort(),
    ).toEqual(
      emitted
        .filter((e) => e.type !== 'contact.updated')
        .map((e) => e.id)
        .sort(),
    );

    const later = await producer.emit('contact.deleted', a.orgId, sample('contact.deleted'));
    await eventually(async () => {
      const res = await a.pub.get(`/api/public/events?after=${end.body.nextCursor}`);
      return res.body.events.length > 0 ? res.body.events : undefined;
    }).then((events) => expect(events.map((e: any) => e.id)).toEqual([later.id]));
    emitted.push({ id: later.id, type: later.type });
  });

  it('types narrows the feed; an unknown or internal type, a malformed cursor or limit is a 400 naming the parameter', async () => {
    const only = await readAll(a.pub, 'types=message.received,contact.deleted');
    expect(only.events.map((e: any) => e.id)).toEqual(
      emitted.filter((e) => ['message.received', 'contact.deleted'].includes(e.type)).map((e) => e.id),
    );

    for (const [query, field] of [
      ['types=contact.created,nope.never', 'types'],
      ['types=chatnet_account.qr', 'types'],
      ['types=chatnet.inbound', 'types'],
      ['after=not-a-cursor', 'after'],
      [`after=${Buffer.from('1:12:abc').toString('base64url')}`, 'after'],
      ['limit=ten', 'limit'],
      ['wait=soon', 'wait'],
    ]) {
      const res = await a.pub.get(`/api/public/events?${query}`);
      expect([query, res.status, res.body.error.details?.[0]?.field]).toEqual([query, 400, field]);
    }
    // limit is clamped to 1..500: 0 reads one event, 10000 reads them all.
    expect((await a.pub.get('/api/public/events?limit=0')).body.events).toHaveLength(1);
    expect((await a.pub.get('/api/public/events?limit=10000')).body.events).toHaveLength(emitted.length);
  });

  it('401 without a key or with a wrong one', async () => {
    expect((await client(stack.url).get('/api/public/events')).status).toBe(401);
    expect(
      (
        await client(stack.url)
          .withKey('crm_live_' + 'x'.repeat(32))
          .get('/api/public/events')
      ).status,
    ).toBe(401);
    expect((await client(stack.url).get('/api/v1/events')).status).toBe(401);
  });

  it('a named key reads the feed only with the scope events:read (403 insufficient_scope naming it otherwise)', async () => {
    const keyWith = async (scopes: string[]) => {
      const made = await a.owner.post('/api/v1/api-keys', { name: `feed ${scopes.join(' ')}`, scopes });
      expect(made.status).toBe(201);
      return client(stack.url).withKey(made.body.key);
    };
    const refused = await (await keyWith(['contacts:read'])).get('/api/public/events');
    expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([
      403,
      'insufficient_scope',
      expect.stringContaining('events:read'),
    ]);
    const allowed = await (await keyWith(['events:read'])).get('/api/public/events?limit=1');
    expect([allowed.status, typeof allowed.body.nextCursor]).toEqual([200, 'string']);
  });

  it('GET /api/v1/events: the same feed for owners and admins; agents and team leads get 403', async () => {
    const pub = await a.pub.get('/api/public/events?limit=500');
    const internal = await a.owner.get('/api/v1/events?limit=500');
    expect(internal.status).toBe(200);
    expect(internal.body.events).toEqual(pub.body.events);
    for (const role of ['admin', 'agent', 'team_lead']) {
      const address = email(role);
      expect((await a.owner.post('/api/v1/users', { email: address, fullName: role, role, password: 'member password 1' })).status).toBe(201);
      const login = await client(stack.url).post('/api/v1/auth/login', { email: address, password: 'member password 1' });
      const res = await client(stack.url).as(login.body.token).get('/api/v1/events');
      expect([role, res.status]).toEqual([role, role === 'admin' ? 200 : 403]);
    }
  });

  it('another organization never sees the events, even with the first one’s cursor', async () => {
    const own = await producer.emit('contact.created', b.orgId, sample('contact.created'));
    // B has no endpoint: its events are in its feed all the same, and only there.
    const feedB = await eventually(async () => {
      const res = await readAll(b.pub);
      return res.events.length > 0 ? res : undefined;
    });
    expect(feedB.events.map((e: any) => e.id)).toEqual([own.id]);
    const start = await a.pub.get('/api/public/events?limit=1');
    const withACursor = await b.pub.get(`/api/public/events?after=${start.body.nextCursor}`);
    expect(withACursor.status).toBe(200);
    expect(withACursor.body.events.map((e: any) => e.id)).toEqual([own.id]);
    expect((await readAll(a.pub)).events.map((e: any) => e.id)).not.toContain(own.id);
    expect((await b.owner.get('/api/v1/events')).body.events.map((e: any) => e.id)).toEqual([own.id]);
  });

  it('wait=10 answers as soon as an event of the organization is appended, by whichever writer; an idle wait answers empty when it ends', async () => {
    const { cursor } = await readAll(a.pub);

    // Idle: an empty page after the wait, with a cursor that still reads from the same place.
    let t0 = Date.now();
    const idle = await a.pub.get(`/api/public/events?wait=1&after=${cursor}`);
    const idleMs = Date.now() - t0;
    expect(idle.body.events).toEqual([]);
    expect(idleMs).toBeGreaterThanOrEqual(950);
    expect(idleMs).toBeLessThan(5_000);

    // An event through the broker and the consumer: the held page answers with it.
    t0 = Date.now();
    const held = a.pub.get(`/api/public/events?wait=10&after=${idle.body.nextCursor}`);
    // Another organization's event does not answer it.
    await producer.emit('contact.created', b.orgId, sample('contact.created'));
    await new Promise((r) => setTimeout(r, 300));
    const event = await producer.emit('message.received', a.orgId, sample('message.received'));
    const res = await held;
    const heldMs = Date.now() - t0;
    expect(res.status).toBe(200);
    expect(res.body.events.map((e: any) => e.id)).toEqual([event.id]);
    expect(heldMs).toBeGreaterThanOrEqual(300);
    expect(heldMs).toBeLessThan(5_000);

    // Any writer's NOTIFY wakes it (another instance's append reaches this one through PostgreSQL, not this process):
    // a row appended here, outside the service, answers a page held by the service.
    t0 = Date.now();
    const held2 = a.pub.get(`/api/public/events?wait=10&after=${res.body.nextCursor}`);
    await new Promise((r) => setTimeout(r, 300));
    const foreignId = randomUUID();
    const body = JSON.stringify({ type: 'contact.deleted', timestamp: new Date().toISOString(), data: sample('contact.deleted') });
    await db.query(
      `WITH f AS (INSERT INTO event_feed (org_id, event_id, event_type, occurred_at, payload, stored_at)
                  VALUES ($1, $2, 'contact.deleted', now(), $3, clock_timestamp()) RETURNING org_id)
       SELECT pg_notify('event_feed_appended', org_id::text) FROM f`,
      [a.orgId, foreignId, body],
    );
    const res2 = await held2;
    expect(res2.body.events.map((e: any) => e.id)).toEqual([foreignId]);
    expect(Date.now() - t0).toBeLessThan(5_000);
    emitted.push({ id: event.id, type: event.type }, { id: foreignId, type: 'contact.deleted' });
  });

  it('two webhooks instances behind two gateways: a page held on each answers with an event whichever consumed it; a stopping instance answers its held pages at once', async () => {
    const silent = createLogger('feed-2', process.env.TEST_LOG_LEVEL ?? 'silent');
    const port = await freePort();
    const second = await webhooksService.start(
      webhooksService.loadConfig({
        ...stack.env,
        WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1',
        DATABASE_URL: stack.databaseUrl('webhooks'),
        GRPC_PORT: String(port),
      }),
      silent,
    );
    const gw2 = await gateway.startGateway(
      gateway.loadConfig({ ...stack.env, HOST: '127.0.0.1', PORT: '0', SERVICES: 'identity,webhooks', WEBHOOKS_ADDR: `127.0.0.1:${port}` }),
      silent,
    );
    let stopped = false;
    try {
      const pub2 = client(gw2.url).withKey(a.apiKey);
      const { cursor } = await readAll(a.pub);
      const t0 = Date.now();
      const [one, two] = [a.pub, pub2].map((api) => api.get(`/api/public/events?wait=10&after=${cursor}`));
      await new Promise((r) => setTimeout(r, 300));
      // Both instances consume the queue: one of them appends the event, the other hears of it through PostgreSQL.
      const event = await producer.emit('contact.created', a.orgId, sample('contact.created'));
      for (const res of await Promise.all([one, two])) {
        expect(res.status).toBe(200);
        expect(res.body.events.map((e: any) => e.id)).toEqual([event.id]);
      }
      expect(Date.now() - t0).toBeLessThan(5_000);
      emitted.push({ id: event.id, type: event.type });

      const { cursor: end } = await readAll(pub2);
      const t1 = Date.now();
      const held = pub2.get(`/api/public/events?wait=20&after=${end}`);
      await new Promise((r) => setTimeout(r, 300));
      await second.stop();
      stopped = true;
      const answered = await held;
      expect(answered.status).toBe(200);
      expect(answered.body.events).toEqual([]);
      expect(Date.now() - t1).toBeLessThan(10_000);
    } finally {
      await gw2.stop();
      if (!stopped) await second.stop();
    }
  });

  it('a cursor older than EVENT_FEED_RETENTION_DAYS is 410 cursor_expired; the sweep deletes what is past it', async () => {
    const c = await orgWithKey(stack.url, 'Feed C');
    const events = await producer.emitMany([
      { type: 'contact.created', orgId: c.orgId, data: sample('contact.created') },
      { type: 'contact.created', orgId: c.orgId, data: sample('contact.created') },
    ]);
    await feedHas(c.pub, 2);
    // Eight days ago, as if stored then (the retention is the default 7 days).
    await db.query(`UPDATE event_feed SET stored_at = stored_at - interval '8 days' WHERE org_id = $1`, [c.orgId]);
    const first = await c.pub.get('/api/public/events?limit=1');
    expect(first.body.events.map((e: any) => e.id)).toEqual([events[0].id]);
    const expired = await c.pub.get(`/api/public/events?after=${first.body.nextCursor}`);
    expect(expired.status).toBe(410);
    expect(expired.body.error.code).toBe('cursor_expired');
    expect((await c.owner.get(`/api/v1/events?after=${first.body.nextCursor}`)).status).toBe(410);

    // The sweep runs on the timer facility; aged rows are due at once when it looks (a NOTIFY makes it look now).
    await db.query(`NOTIFY event_feed_sweep`);
    await eventually(async () => {
      const { rows } = await db.query('SELECT count(*)::int AS n FROM event_feed WHERE org_id = $1', [c.orgId]);
      return rows[0].n === 0 ? true : undefined;
    });
    expect((await c.pub.get('/api/public/events')).body.events).toEqual([]);
    // Other organizations' events, within the retention, are kept.
    expect((await readAll(a.pub)).events.length).toBe(emitted.length);
  });
});
