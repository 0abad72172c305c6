import { IncomingMessage, ServerResponse } from 'node:http';
import { createClient } from '@redis/client';
import { authKeys } from '@crm/auth';
import { createLogger } from '@crm/logger';
import { eventually, infra } from '@crm/testing';
import * as gateway from '@crm/gateway';
import { client, Client, email, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { RedisGate, startRedisGate } from './redis-gate';

/**
 * The authenticated hot path needs no Redis round trip: revocations and API keys are answered from memory kept
 * current by identity's messages (and a resync for missed ones), and rate limits are counted in memory and
 * reconciled with Redis in the background. Each gateway under test here is a second instance next to the stack's
 * own, so a change made through the stack's gateway reaches it only the way it reaches any other instance.
 */
describe('gateway hot path without a Redis round trip', () => {
  const USER_LIMIT = 100;
  const FLUSH_MS = 50;
  const PASSWORD = 'correct horse battery';
  let stack: Stack;
  let api: Client;
  let acme: Awaited<ReturnType<typeof newOrg>>;
  const gateways: gateway.RunningGateway[] = [];
  const gates: RedisGate[] = [];
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  beforeAll(async () => {
    stack = await startStack({ env: { RATE_LIMIT_USER_PER_MINUTE: String(USER_LIMIT), RATE_LIMIT_FLUSH_MS: String(FLUSH_MS) } });
    api = client(stack.url);
    acme = await newOrg(api, 'Acme');
  });
  afterAll(async () => {
    for (const g of gates) g.open();
    for (const g of gateways) await g.stop();
    for (const g of gates) await g.close();
    await stack.stop();
  });

  async function startGateway(env: Record<string, string> = {}) {
    const config = gateway.loadConfig({ ...stack.env, HOST: '127.0.0.1', PORT: '0', ...env });
    const g = await gateway.startGateway(config, createLogger('test', 'silent'));
    gateways.push(g);
    return g;
  }

  /** A second gateway whose Redis commands can be held back (its subscription keeps flowing). */
  async function gatedGateway(env: Record<string, string> = {}) {
    const gate = await startRedisGate(infra.redisUrl);
    gates.push(gate);
    const g = await startGateway({ REDIS_URL: gate.url, ...env });
    return { gate, api: client(g.url) };
  }

  async function newUser() {
    const address = email('agent');
    const created = await acme.owner.post('/api/v1/users', { email: address, fullName: 'Sam Staff', role: 'agent', password: PASSWORD });
    expect(created.status).toBe(201);
    const login = await api.post('/api/v1/auth/login', { email: address, password: PASSWORD });
    expect(login.status).toBe(200);
    return { id: created.body.id as string, token: login.body.token as string };
  }

  /** Resolves with the response, or 'no reply' if none came within `ms` (the request waits on Redis). */
  function within<T>(p: Promise<T>, ms: number): Promise<T | 'no reply'> {
    return Promise.race([p, sleep(ms).then(() => 'no reply' as const)]);
  }

  it('with Redis commands held back, a seen token is served; a logout through another gateway is refused within 100 ms', async () => {
    const { gate, api: gated } = await gatedGateway();
    const user = await newUser();
    const me = gated.as(user.token);
    // The first request of a token reads its revocation keys once.
    expect((await me.get('/api/v1/profile')).status).toBe(200);

    gate.shut();
    for (let i = 0; i < 5; i++)
      expect(
        await within(
          me.get('/api/v1/profile').then((r) => r.status),
          2000,
        ),
      ).toBe(200);
    // Proof the gate holds: a token this gateway has never seen needs Redis, and gets no answer.
    const unseen = await newUser();
    expect(await within(gated.as(unseen.token).get('/api/v1/profile'), 500)).toBe('no reply');

    expect((await api.as(user.token).post('/api/v1/auth/logout', {})).status).toBe(200);
    await sleep(100);
    const refused = await within(me.get('/api/v1/profile'), 2000);
    expect(refused).not.toBe('no reply');
    expect(refused).toMatchObject({ status: 401, body: { error: { code: 'invalid_token' } } });
    gate.open();
  });

  it('a revocation whose message was missed is applied by the resync (identity’s writes, no publish)', async () => {
    const g = await startGateway({ REVOCATION_RESYNC_MS: '300' });
    const me = client(g.url);
    const loggedOut = await newUser();
    const demoted = await newUser();
    expect((await me.as(loggedOut.token).get('/api/v1/profile')).status).toBe(200);
    expect((await me.as(demoted.token).get('/api/v1/profile')).status).toBe(200);

    const keys = authKeys(stack.env.REDIS_PREFIX);
    const jti = JSON.parse(Buffer.from(loggedOut.token.split('.')[1], 'base64url').toString()).jti;
    const redis = await createClient({ url: infra.redisUrl }).connect();
    try {
      // What identity's MULTI writes, minus the message: as if this gateway was reconnecting when it was sent.
      await redis
        .multi()
        .set(keys.revokedJti(jti), '1', { expiration: { type: 'EX', value: 60 } })
        .set(keys.validAfter(demoted.id), String(Date.now()), { expiration: { type: 'EX', value: 60 } })
        .incr(keys.revocationsGeneration)
        .exec();
    } finally {
      redis.destroy();
    }
    // Still served from memory until the resync (every 300 ms) notices the new generation: asked until it has,
    // within 5 s (a loaded machine can delay a resync; without one they would be served for the token's life).
    const refused = async (token: string) => ((await me.as(token).get('/api/v1/profile')).status === 401 ? true : undefined);
    expect(await eventually(() => refused(loggedOut.token), 5_000, 50)).toBe(true);
    expect(await eventually(() => refused(demoted.token), 5_000, 50)).toBe(true);
  });

  it('an API key rotated through another gateway stops working on this one at once, though it was cached in memory', async () => {
    const { gate, api: gated } = await gatedGateway();
    const old = (await acme.owner.post('/api/v1/settings/api-key/generate')).body.apiKey as string;
    expect((await gated.withKey(old).get('/api/public/whoami')).status).toBe(200);
    // Cached in memory: served with Redis commands held back.
    gate.shut();
    expect(
      await within(
        gated
          .withKey(old)
          .get('/api/public/whoami')
          .then((r) => r.status),
        2000,
      ),
    ).toBe(200);

    const rotated = (await acme.owner.post('/api/v1/settings/api-key/generate')).body.apiKey as string;
    gate.open();
    // A key still cached as valid would be answered 200 from memory without asking Redis or identity.
    expect((await gated.withKey(old).get('/api/public/whoami')).status).toBe(401);
    expect((await gated.withKey(rotated).get('/api/public/whoami')).status).toBe(200);
  });

  it('requests and responses are made as express objects: express has no prototype to swap as they enter the app', async () => {
    // express sets each request's prototype on entry; V8 then runs everything on that object on slow paths (about a
    // fifth of the gateway's CPU per read, http/express-server.ts). Seen before express: the objects node made.
    const g = await startGateway();
    const seen: { get: string; json: string; entries: boolean }[] = [];
    g.server.prependListener('request', (req: Record<string, unknown>, res: Record<string, unknown>) =>
      seen.push({ get: typeof req.get, json: typeof res.json, entries: req instanceof IncomingMessage && res instanceof ServerResponse }),
    );
    const res = await client(g.url).as(acme.token).get('/api/v1/profile');
    expect(res.status).toBe(200);
    expect(res.body.id).toBeTruthy();
    expect(seen).toEqual([{ get: 'function', json: 'function', entries: true }]);
  });

  it('the per-user limit holds across two gateways on one Redis: between the limit and the limit plus the documented overshoot', async () => {
    const second = client((await startGateway()).url);
    const user = await newUser();
    // Stay inside one minute window for the whole run.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await sleep(60_000 - intoMinute + 200);
    const gwA = api.as(user.token);
    const gwB = second.as(user.token);
    let admitted = 0;
    const started = Date.now();
    for (let i = 0; i < 2 * USER_LIMIT; i++) {
      const res = await (i % 2 ? gwB : gwA).get('/api/v1/profile');
      if (res.status === 200) admitted++;
      else expect(res.status).toBe(429);
    }
    const perFlush = ((2 * USER_LIMIT) / (Date.now() - started)) * FLUSH_MS;
    // Every request up to the limit is admitted (no gateway can know of more than were made) …
    expect(admitted).toBeGreaterThanOrEqual(USER_LIMIT);
    // … and past it, at most what the other gateway admits in about two flush intervals (rate-limiter.ts), plus
    // a margin for a slow round trip. Counted separately, two gateways would admit 2 × the limit.
    expect(admitted).toBeLessThanOrEqual(USER_LIMIT + Math.ceil(perFlush) + 10);
  });
});
