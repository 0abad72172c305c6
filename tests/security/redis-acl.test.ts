import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createClient, type RedisClientType } from '@redis/client';
import { authKeys } from '@crm/auth';
import { infra } from '@crm/testing';
import { client, newOrg } from '../support/http';
import { startStack, type ServiceName, type Stack } from '../support/stack';

// Redis under the deployment's ACLs (deploy/redis/acl.sh, issue #27 item 1): each service's user reaches only its own
// keys. A compromised ai or connector cannot mint an API key for any org (the gateway trusts what it finds at
// crm:apikey:<hash>) nor delete a logout's deny-list entry: NOPERM. The users are made on the local Redis under this
// run's names and prefix, and a whole stack runs with each process signed in as its own user.
const root = path.resolve(__dirname, '../..');
const USERS = ['identity', 'gateway', 'messaging', 'chatnet-connector', 'ai'] as const;
type User = (typeof USERS)[number];

describe('Redis ACLs of the deployment', () => {
  const run = `acl${randomBytes(4).toString('hex')}`;
  const prefix = `${run}:`;
  const passwords = Object.fromEntries(USERS.map((u) => [u, randomBytes(16).toString('hex')])) as Record<User, string>;
  const name = (u: User) => `${run}_${u}`;
  const urlFor = (u: User) => Object.assign(new URL(infra.redisUrl), { username: name(u), password: passwords[u] }).toString();
  const admin = createClient({ url: infra.redisUrl });
  const users = new Map<User, RedisClientType>();
  let stack: Stack;

  beforeAll(async () => {
    const env = {
      PATH: process.env.PATH,
      REDIS_PREFIX: prefix,
      ...Object.fromEntries(USERS.map((u) => [`${u.replace(/-/g, '_').toUpperCase()}_REDIS_PASSWORD`, passwords[u]])),
    };
    const lines = execFileSync('sh', [path.join(root, 'deploy/redis/acl.sh')], { env, encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(lines[0]).toBe('user default off');
    await admin.connect();
    for (const line of lines.slice(1)) {
      const [, user, ...rules] = line.split(' ');
      await admin.sendCommand(['ACL', 'SETUSER', name(user as User), 'reset', ...rules]);
    }
    for (const u of USERS) {
      const c = createClient({ url: urlFor(u) });
      c.on('error', () => undefined);
      await c.connect();
      users.set(u, c);
    }
  });
  afterAll(async () => {
    await stack?.stop();
    for (const c of users.values()) await c.quit().catch(() => undefined);
    for (const u of USERS) await admin.sendCommand(['ACL', 'DELUSER', name(u)]).catch(() => undefined);
    const keys: string[] = [];
    for await (const batch of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) keys.push(...batch);
    if (keys.length) await admin.del(keys);
    await admin.quit();
  });

  const keys = authKeys(prefix);
  const refused = async (p: Promise<unknown>) => expect(p).rejects.toThrow(/NOPERM/);

  it('the ai and connector users cannot write API-key cache entries or revocation keys', async () => {
    for (const u of ['ai', 'chatnet-connector', 'messaging'] as const) {
      const c = users.get(u)!;
      await refused(c.set(keys.apiKey('f'.repeat(64)), randomBytes(16).toString('hex')));
      await refused(c.del(keys.revokedJti('some-jti')));
      await refused(c.set(keys.validAfter('some-user'), '0'));
      await refused(c.publish(keys.revocations, '{}'));
    }
    // Each works in its own area.
    expect(await users.get('ai')!.set(`${prefix}ai:quota:test`, '1')).toBe('OK');
    expect(await users.get('chatnet-connector')!.set(`${prefix}chatnet:test`, '1')).toBe('OK');
    expect(await users.get('messaging')!.set(`${prefix}msg:gov:test`, '1')).toBe('OK');
  });

  it('the gateway reads the revocation keys but cannot write them; identity writes them', async () => {
    expect(await users.get('identity')!.set(keys.revokedJti('j1'), '1')).toBe('OK');
    expect(await users.get('gateway')!.get(keys.revokedJti('j1'))).toBe('1');
    await refused(users.get('gateway')!.del(keys.revokedJti('j1')));
    await refused(users.get('gateway')!.set(keys.validAfter('u1'), '0'));
  });

  it('API-key cache entries (grants) are written by identity alone: the gateway reads them', async () => {
    const entry = keys.apiKey('e'.repeat(64));
    expect(await users.get('identity')!.set(entry, 'invalid')).toBe('OK');
    expect(await users.get('gateway')!.get(entry)).toBe('invalid');
    await refused(
      users.get('gateway')!.set(entry, JSON.stringify({ orgId: 'o', keyId: 'k', userId: '', role: 'owner', scopes: [], expiresAt: 0, issuedAt: 0 })),
    );
    await refused(users.get('gateway')!.del(entry));
  });

  it('the whole product works with every process signed in as its own user', async () => {
    const own = (u: User) => ({ REDIS_URL: urlFor(u), REDIS_PREFIX: prefix });
    const services: ServiceName[] = ['messaging', 'chatnet-connector', 'ai', 'crm'];
    stack = await startStack({
      services,
      env: { SIGNUP_ENABLED: 'true' },
      serviceEnv: {
        identity: own('identity'),
        messaging: own('messaging'),
        'chatnet-connector': own('chatnet-connector'),
        ai: own('ai'),
        crm: { REDIS_PREFIX: prefix },
      },
      gatewayEnv: own('gateway'),
    });
    const { owner, token } = await newOrg(client(stack.url), 'ACL Org');
    // Sign-in (identity's throttle keys), an API key (identity writes its grant, the gateway reads it), a logout (revocation).
    const key = (await owner.post('/api/v1/settings/api-key/generate')).body.apiKey;
    expect((await client(stack.url).withKey(key).get('/api/public/whoami')).status).toBe(200);
    // The connector (leases, QR, sandbox) and messaging (the governor, on a send).
    const accountId = (await owner.post('/api/v1/chatnet-accounts', { displayName: 'ACL line' })).body.id;
    expect((await owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    expect((await owner.post(`/sandbox/accounts/${accountId}/scan`, {})).body.status).toBe('connected');
    expect((await owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: 'acl-1', fromName: 'Acl Person', content: 'hello' })).status).toBe(
      200,
    );
    // The ai service (its quota), with the local engine.
    expect((await owner.put('/api/v1/ai/config', { provider: 'local', enabled: true })).status).toBe(200);
    expect((await owner.post('/api/v1/ai/sentiment', { text: 'Great service, thank you' })).status).toBe(200);
    // A logout is refused afterwards on the gateway (it reads what identity wrote).
    expect((await owner.post('/api/v1/auth/logout', {})).status).toBeLessThan(300);
    expect((await client(stack.url).as(token).get('/api/v1/profile')).status).toBe(401);
  }, 120_000);
});
