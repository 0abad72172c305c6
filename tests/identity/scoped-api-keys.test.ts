import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Pool } from '@crm/db';
import { createLogger } from '@crm/logger';
import { createServiceClient, loadProto, serviceDefinition } from '@crm/grpc-kit';
import { eventually, testAuth, testPool } from '@crm/testing';
import * as gateway from '@crm/gateway';
import { startCrmStack, type CrmStack } from '../crm/crm-support';
import { member } from '../messaging/inbox-support';
import { eventBus, fakeConnector } from '../messaging/support';
import { auditEntryFor } from '../support/audit';
import { client, Client, newOrg } from '../support/http';

/**
 * Named API keys with scopes, optionally bound to a user (issue #31 item 3), through the gateway against identity,
 * crm and messaging (the chat network is a fake connector): create / list / revoke, each scope refused and allowed,
 * the org key with every scope, a user-bound agent key under "assigned" visibility, deactivation, role change and
 * expiry, the org's agentKeys switch, other organizations, revocation seen by a second gateway, audit entries.
 */
describe('named API keys with scopes', () => {
  const ALL = [
    'contacts:read',
    'contacts:write',
    'conversations:read',
    'messages:send',
    'appointments:read',
    'appointments:write',
    'events:read',
    'webhooks:manage',
  ];
  let crm: CrmStack;
  let api: Client;
  let db: Pool;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let acme: Awaited<ReturnType<typeof newOrg>> & { orgId: string };
  let globex: Awaited<ReturnType<typeof newOrg>>;
  let orgKey: Client;
  let agent: Awaited<ReturnType<typeof member>>;
  let agent2: Awaited<ReturnType<typeof member>>;
  let admin: Awaited<ReturnType<typeof member>>;
  let account: string;
  let otherAccount: string;
  let contactId: string;
  const conv: Record<'mine' | 'theirs' | 'elsewhere', string> = {} as never;
  const second: gateway.RunningGateway[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'scoped-keys-'));

  /** A key created by `by` (the owner unless said), answered 201. */
  async function newKey(body: Record<string, unknown>, by?: Client) {
    const res = await (by ?? acme.owner).post('/api/v1/api-keys', { name: 'integration', ...body });
    expect(res.status).toBe(201);
    return res.body as { id: string; key: string; userId: string | null; scopes: string[] };
  }
  const ids = (rows: { id: string }[]) => rows.map((r) => r.id).sort();

  beforeAll(async () => {
    connector = await fakeConnector();
    crm = await startCrmStack({
      services: ['messaging'],
      env: { SIGNUP_ENABLED: 'true' },
      serviceEnv: { messaging: { CONNECTOR_ADDR: connector.addr, ATTACHMENTS_DIR: dir } },
    });
    api = crm.api;
    db = testPool(crm.stack.databaseUrl('messaging'), 2);
    bus = await eventBus(crm.stack);
    acme = { ...(await newOrg(api, 'Keys Acme')), orgId: '' };
    acme.orgId = acme.user.orgId;
    globex = await newOrg(api, 'Keys Globex');
    orgKey = api.withKey((await acme.owner.post('/api/v1/settings/api-key/generate')).body.apiKey);
    agent = await member(crm.stack.url, acme.owner, 'agent', 'key agent');
    agent2 = await member(crm.stack.url, acme.owner, 'agent', 'key agent two');
    admin = await member(crm.stack.url, acme.owner, 'admin', 'key admin');

    account = connector.account(acme.orgId);
    otherAccount = connector.account(acme.orgId);
    await db.query(`INSERT INTO account_assignments (org_id, chatnet_account_id, mode, user_ids) VALUES ($1, $2, 'manual', $3)`, [
      acme.orgId,
      account,
      [agent.id, agent2.id],
    ]);
    await bus.inbound(acme.orgId, { accountId: account, fromUid: 'mine', fromName: 'Mine Person', content: 'hello' });
    await bus.inbound(acme.orgId, { accountId: account, fromUid: 'theirs', fromName: 'Theirs Person', content: 'hello' });
    await bus.inbound(acme.orgId, { accountId: otherAccount, fromUid: 'elsewhere', fromName: 'Elsewhere Person', content: 'hello' });
    const list = await eventually(async () => {
      const res = await acme.owner.get('/api/v1/conversations?limit=100');
      return res.body.data?.length === 3 ? res.body.data : undefined;
    }, 20_000);
    for (const c of list) conv[c.threadId as keyof typeof conv] = c.id;
    contactId = list.find((c: { threadId: string }) => c.threadId === 'mine').contactId;
    expect((await acme.owner.put(`/api/v1/conversations/${conv.mine}/assignee`, { userId: agent.id })).status).toBe(200);
    expect((await acme.owner.put(`/api/v1/conversations/${conv.theirs}/assignee`, { userId: agent2.id })).status).toBe(200);
  }, 90_000);
  afterAll(async () => {
    for (const g of second) await g.stop();
    await db?.end();
    await bus?.close();
    await crm?.stop();
    await connector?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  it('POST /api-keys answers 201 with the key once; GET lists it without key material; the creation is audited', async () => {
    const res = await acme.owner.post('/api/v1/api-keys', { name: 'CRM sync', scopes: ['contacts:read', 'contacts:read', 'events:read'] });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'CRM sync',
      scopes: ['contacts:read', 'events:read'],
      userId: null,
      prefix: `crm_live_••••${res.body.key.slice(-4)}`,
      key: expect.stringMatching(/^crm_live_[0-9A-Za-z]{32}$/),
      createdAt: expect.any(String),
      expiresAt: null,
      lastUsedAt: null,
    });
    const list = await acme.owner.get('/api/v1/api-keys?limit=100');
    expect(list.status).toBe(200);
    expect(list.body.pagination).toEqual(expect.objectContaining({ page: 1, limit: 100 }));
    const listed = list.body.data.find((k: { id: string }) => k.id === res.body.id);
    expect(listed).toEqual({ ...res.body, key: undefined, lastUsedAt: null });
    expect(listed).not.toHaveProperty('key');
    expect(JSON.stringify(list.body)).not.toContain(res.body.key);
    const entry = await auditEntryFor(acme.owner, 'api_key.created', res.body.id);
    expect(entry).toEqual(expect.objectContaining({ actorId: acme.user.id, actorType: 'user' }));
    expect(entry.details).toEqual(expect.objectContaining({ name: 'CRM sync', scopes: ['contacts:read', 'events:read'], keyMask: res.body.prefix }));
    expect(JSON.stringify(entry)).not.toContain(res.body.key);
  });

  it('refuses bad input with 400 naming the field, and no credential with 401', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ scopes: ['contacts:read'] }, 'name'],
      [{ name: '  ', scopes: ['contacts:read'] }, 'name'],
      [{ name: 'x', scopes: [] }, 'scopes'],
      [{ name: 'x' }, 'scopes'],
      [{ name: 'x', scopes: ['contacts:delete'] }, 'scopes[0]'],
      [{ name: 'x', scopes: ['contacts:read'], expiresAt: new Date(Date.now() - 60_000).toISOString() }, 'expiresAt'],
      [{ name: 'x', scopes: ['contacts:read'], expiresAt: 'tomorrow' }, 'expiresAt'],
      [{ name: 'x', scopes: ['contacts:read'], userId: 'nobody' }, 'userId'],
      // Another organization's user is no user of this one.
      [{ name: 'x', scopes: ['contacts:read'], userId: globex.user.id }, 'userId'],
    ];
    for (const [body, field] of cases) {
      const res = await acme.owner.post('/api/v1/api-keys', body);
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    expect((await api.post('/api/v1/api-keys', { name: 'x', scopes: ['contacts:read'] })).status).toBe(401);
    expect((await api.get('/api/v1/api-keys')).status).toBe(401);
    expect((await api.del('/api/v1/api-keys/00000000-0000-4000-8000-000000000000')).status).toBe(401);
    expect((await acme.owner.put('/api/v1/settings/api', { agentKeys: 'yes' })).body.error.details[0].field).toBe('agentKeys');
    expect((await acme.owner.get('/api/v1/api-keys?limit=many')).status).toBe(400);
  });

  /** One public call per scope, and the status it answers when allowed. */
  const calls: Record<string, { call: (c: Client) => Promise<{ status: number; body: any }>; ok: number }> = {
    'contacts:read': { call: (c) => c.get('/api/public/contacts'), ok: 200 },
    'contacts:write': { call: (c) => c.post('/api/public/contacts', { fullName: 'Scoped Person' }), ok: 201 },
    'conversations:read': { call: (c) => c.get('/api/public/conversations'), ok: 200 },
    'messages:send': {
      call: (c) => c.post('/api/public/messages/send', { chatnetAccountId: account, threadId: 'mine', content: 'from a key' }),
      ok: 200,
    },
    'appointments:read': { call: (c) => c.get('/api/public/appointments'), ok: 200 },
    'appointments:write': { call: (c) => c.post('/api/public/appointments', { contactId, appointmentDate: '2031-05-01' }), ok: 201 },
  };

  it.each(Object.keys(calls))('a key without %s gets 403 insufficient_scope naming it; with it, the call succeeds', async (scope) => {
    const without = await newKey({ scopes: ALL.filter((s) => s !== scope) });
    const refused = await calls[scope].call(api.withKey(without.key));
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('insufficient_scope');
    expect(refused.body.error.message).toContain(scope);
    expect(refused.body.error.details).toEqual([{ field: 'scope', message: scope }]);
    const only = await newKey({ scopes: [scope] });
    const allowed = await calls[scope].call(api.withKey(only.key));
    expect([allowed.status, allowed.body?.error]).toEqual([calls[scope].ok, undefined]);
    // Any key may check itself.
    expect((await api.withKey(only.key).get('/api/public/whoami')).body).toEqual({ organizationId: acme.orgId });
  });

  it('events:read and webhooks:manage are grantable and grant nothing else', async () => {
    const k = await newKey({ scopes: ['events:read', 'webhooks:manage'] });
    expect(k.scopes).toEqual(['events:read', 'webhooks:manage']);
    for (const scope of Object.keys(calls)) expect((await calls[scope].call(api.withKey(k.key))).status).toBe(403);
  });

  it('the organization’s own key keeps every scope', async () => {
    for (const scope of Object.keys(calls)) {
      const res = await calls[scope].call(orgKey);
      expect([scope, res.status]).toEqual([scope, calls[scope].ok]);
    }
  });

  it('a key bound to an agent under "assigned" visibility sees only what the agent sees; the org key sees everything', async () => {
    expect((await acme.owner.put('/api/v1/settings/inbox', { agentVisibility: 'assigned' })).status).toBe(200);
    const k = await newKey({ scopes: ['conversations:read', 'contacts:read'], userId: agent.id });
    expect(k.userId).toBe(agent.id);
    const bound = api.withKey(k.key);
    const convs = await bound.get('/api/public/conversations?limit=100');
    expect(convs.status).toBe(200);
    // Assigned to the agent; the one assigned to agent2 and the one on an account not listing them are hidden.
    expect(convs.body.conversations.map((c: { id: string }) => c.id)).toEqual([conv.mine]);
    expect((await bound.get(`/api/public/conversations/${conv.theirs}/messages`)).status).toBe(404);
    expect((await bound.get(`/api/public/conversations/${conv.mine}/messages`)).status).toBe(200);
    expect(ids((await orgKey.get('/api/public/conversations?limit=100')).body.conversations)).toEqual(Object.values(conv).sort());
    // crm learns the setting and the conversations from messaging's events: wait for its settled answer.
    const visible = await eventually(async () => {
      const res = await bound.get('/api/public/contacts?limit=100');
      return res.body.contacts?.length === 1 ? res.body.contacts : undefined;
    }, 15_000);
    expect(visible.map((c: { id: string }) => c.id)).toEqual([contactId]);
    expect((await orgKey.get('/api/public/contacts?limit=100')).body.contacts.length).toBeGreaterThan(1);
    expect((await acme.owner.put('/api/v1/settings/inbox', { agentVisibility: 'all' })).status).toBe(200);
  });

  it('a user-bound key follows the user’s role change, and stops working (401) when the user is deactivated', async () => {
    const lead = await member(crm.stack.url, acme.owner, 'agent', 'promoted agent');
    expect((await acme.owner.put('/api/v1/settings/inbox', { agentVisibility: 'assigned' })).status).toBe(200);
    const k = api.withKey((await newKey({ scopes: ['conversations:read'], userId: lead.id })).key);
    expect((await k.get('/api/public/conversations?limit=100')).body.conversations).toEqual([]);
    expect((await acme.owner.put(`/api/v1/users/${lead.id}`, { role: 'team_lead' })).status).toBe(200);
    await eventually(async () => (await k.get('/api/public/conversations?limit=100')).body.conversations?.length === 3, 3_000);
    expect((await acme.owner.put('/api/v1/settings/inbox', { agentVisibility: 'all' })).status).toBe(200);

    expect((await acme.owner.del(`/api/v1/users/${lead.id}`)).status).toBe(204);
    const refused = await eventually(async () => {
      const res = await k.get('/api/public/conversations');
      return res.status === 401 ? res : undefined;
    }, 3_000);
    expect(refused.body.error.code).toBe('invalid_api_key');
  });

  it('an expired key is 401 api_key_expired', async () => {
    const k = await newKey({ scopes: ['contacts:read'], expiresAt: new Date(Date.now() + 1500).toISOString() });
    expect((await api.withKey(k.key).get('/api/public/contacts')).status).toBe(200);
    const expired = await eventually(async () => {
      const res = await api.withKey(k.key).get('/api/public/contacts');
      return res.status === 401 ? res : undefined;
    }, 5_000);
    expect(expired.body.error.code).toBe('api_key_expired');
  });

  it('a key first used after its expiry is 401 api_key_expired too (identity answers; the gateway held no grant of it)', async () => {
    // The gateway forgets a grant once its Redis entry, which ends at the key's expiry, is gone (a resync): then it
    // asks identity, whose refusal names the expiry. It used to answer invalid_api_key on that path.
    const k = await newKey({ scopes: ['contacts:read'], expiresAt: new Date(Date.now() + 1200).toISOString() });
    await new Promise((r) => setTimeout(r, 1500));
    const res = await api.withKey(k.key).get('/api/public/contacts');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('api_key_expired');
  });

  it('agents create keys bound to themselves only while the org allows it; they list and revoke only their own', async () => {
    expect((await agent.api.get('/api/v1/settings/api')).body).toEqual({ agentKeys: false });
    const off = await agent.api.post('/api/v1/api-keys', { name: 'mine', scopes: ['contacts:read'] });
    expect(off.status).toBe(403);
    expect((await agent.api.put('/api/v1/settings/api', { agentKeys: true })).status).toBe(403);
    expect((await acme.owner.put('/api/v1/settings/api', { agentKeys: true })).body).toEqual({ agentKeys: true });
    expect((await acme.owner.get('/api/v1/settings/api')).body).toEqual({ agentKeys: true });
    const settings = await auditEntryFor(acme.owner, 'api_settings.updated', acme.orgId);
    expect(settings.details).toEqual({ agentKeys: { from: false, to: true } });

    const own = await newKey({ scopes: ['contacts:read'] }, agent.api);
    expect(own.userId).toBe(agent.id);
    expect((await agent.api.post('/api/v1/api-keys', { name: 'theirs', scopes: ['contacts:read'], userId: agent2.id })).status).toBe(403);
    const others = await newKey({ scopes: ['contacts:read'], userId: agent2.id });
    const listed = await agent.api.get('/api/v1/api-keys?limit=100');
    expect(listed.body.data.map((k: { userId: string }) => k.userId)).toEqual(expect.arrayContaining([agent.id]));
    expect(new Set(listed.body.data.map((k: { userId: string }) => k.userId))).toEqual(new Set([agent.id]));
    expect((await agent.api.del(`/api/v1/api-keys/${others.id}`)).status).toBe(404);
    expect((await agent.api.del(`/api/v1/api-keys/${own.id}`)).status).toBe(204);

    expect((await acme.owner.put('/api/v1/settings/api', { agentKeys: false })).status).toBe(200);
    expect((await agent.api.post('/api/v1/api-keys', { name: 'again', scopes: ['contacts:read'] })).status).toBe(403);
  });

  it('an admin cannot bind a key to a user above their own role (403)', async () => {
    const res = await admin.api.post('/api/v1/api-keys', { name: 'as owner', scopes: ['contacts:read'], userId: acme.user.id });
    expect(res.status).toBe(403);
    expect((await admin.api.post('/api/v1/api-keys', { name: 'as agent', scopes: ['contacts:read'], userId: agent.id })).status).toBe(201);
  });

  it('another organization’s key id is 404 and never listed', async () => {
    const k = await newKey({ scopes: ['contacts:read'] });
    expect((await globex.owner.del(`/api/v1/api-keys/${k.id}`)).status).toBe(404);
    expect((await globex.owner.get('/api/v1/api-keys?limit=100')).body.data.map((x: { id: string }) => x.id)).not.toContain(k.id);
    expect((await acme.owner.del('/api/v1/api-keys/not-a-key-id')).status).toBe(404);
    expect((await api.withKey(k.key).get('/api/public/contacts')).status).toBe(200);
  });

  it('DELETE revokes at once (204, then 401; again 404) and is audited', async () => {
    const k = await newKey({ scopes: ['contacts:read'] });
    expect((await api.withKey(k.key).get('/api/public/contacts')).status).toBe(200);
    expect((await acme.owner.del(`/api/v1/api-keys/${k.id}`)).status).toBe(204);
    expect((await api.withKey(k.key).get('/api/public/contacts')).status).toBe(401);
    expect((await acme.owner.del(`/api/v1/api-keys/${k.id}`)).status).toBe(404);
    expect((await acme.owner.get('/api/v1/api-keys?limit=100')).body.data.map((x: { id: string }) => x.id)).not.toContain(k.id);
    const entry = await auditEntryFor(acme.owner, 'api_key.revoked', k.id);
    expect(entry.details).toEqual(expect.objectContaining({ name: 'integration' }));
  });

  it('a revocation reaches a second gateway instance (which cached the key in memory) within 1 s', async () => {
    const g = await gateway.startGateway(gateway.loadConfig({ ...crm.stack.env, HOST: '127.0.0.1', PORT: '0' }), createLogger('test', 'silent'));
    second.push(g);
    const k = await newKey({ scopes: ['contacts:read'] });
    const there = client(g.url).withKey(k.key);
    expect((await there.get('/api/public/contacts')).status).toBe(200);
    expect((await there.get('/api/public/contacts')).status).toBe(200);
    expect((await acme.owner.del(`/api/v1/api-keys/${k.id}`)).status).toBe(204);
    const revokedAt = Date.now();
    await eventually(async () => (await there.get('/api/public/whoami')).status === 401, 1_000, 20);
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
  });

  it('lastUsedAt is kept, written at most once a minute whatever the gateways report', async () => {
    const k = await newKey({ scopes: ['contacts:read'] });
    expect((await api.withKey(k.key).get('/api/public/contacts')).status).toBe(200);
    const used = await eventually(async () => {
      const res = await acme.owner.get('/api/v1/api-keys?limit=100');
      return res.body.data.find((x: { id: string; lastUsedAt: string | null }) => x.id === k.id && x.lastUsedAt)?.lastUsedAt as string | undefined;
    });
    // Reported again (another gateway instance, say) within the minute: not written.
    const identity = createServiceClient(
      serviceDefinition(loadProto('identity/v1/identity.proto'), 'identity.v1.IdentityService'),
      crm.stack.addr('identity'),
      testAuth('gateway'),
    );
    const direct = testPool(crm.stack.databaseUrl('identity'), 1);
    const lastUsed = async () =>
      (await direct.query<{ last_used_at: Date }>('SELECT last_used_at FROM api_keys WHERE id = $1', [k.id])).rows[0].last_used_at;
    try {
      const as = { orgId: acme.orgId, userId: '', role: 'agent' };
      await identity.RecordApiKeyUse({ id: k.id }, as);
      expect((await lastUsed()).toISOString()).toBe(used);
      // A minute later, the next report is written.
      await direct.query("UPDATE api_keys SET last_used_at = last_used_at - interval '61 seconds' WHERE id = $1", [k.id]);
      const before = await lastUsed();
      await identity.RecordApiKeyUse({ id: k.id }, as);
      expect((await lastUsed()).getTime()).toBeGreaterThan(before.getTime());
      // Another organization's report changes nothing of this org's key.
      const untouched = await lastUsed();
      await direct.query("UPDATE api_keys SET last_used_at = last_used_at - interval '61 seconds' WHERE id = $1", [k.id]);
      await identity.RecordApiKeyUse({ id: k.id }, { ...as, orgId: globex.user.orgId });
      expect((await lastUsed()).getTime()).toBe(untouched.getTime() - 61_000);
    } finally {
      identity.close();
      await direct.end();
    }
  });
});
