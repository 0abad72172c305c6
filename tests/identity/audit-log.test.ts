import { randomUUID } from 'node:crypto';
import { connect, type ChannelModel, type ConfirmChannel } from 'amqplib';
import { Client as PgClient } from 'pg';
import { amqpUser, dlqName } from '@crm/events';
import { eventually, infra } from '@crm/testing';
import { auditEntries, auditEntryFor } from '../support/audit';
import { eventData } from '../support/event-data';
import { Client, client, email, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { connectPatiently } from '../support/patient-client';

describe('GET /api/v1/audit-log (identity)', () => {
  let stack: Stack;
  let api: Client;
  let acme: Awaited<ReturnType<typeof newOrg>>;
  let globex: Awaited<ReturnType<typeof newOrg>>;
  let db: PgClient;
  let amqp: ChannelModel;
  let channel: ConfirmChannel;
  const password = 'correct horse battery';

  beforeAll(async () => {
    // A short sweep interval so the retention test sees a sweep within a second.
    stack = await startStack({ serviceEnv: { identity: { AUDIT_SWEEP_INTERVAL_MS: '300' } } });
    api = client(stack.url);
    acme = await newOrg(api, 'Acme');
    globex = await newOrg(api, 'Globex');
    db = await connectPatiently(stack.databaseUrl('identity'));
    amqp = await connect(infra.amqpUrl);
    channel = await amqp.createConfirmChannel();
    await channel.assertExchange(stack.env.EVENTS_EXCHANGE, 'topic', { durable: true });
  });
  afterAll(async () => {
    await amqp?.close().catch(() => undefined);
    await db?.end();
    await stack?.stop();
  });

  async function createUser(owner: Client, role: string, headers: Record<string, string> = {}) {
    const address = email(role);
    const res = await owner.post('/api/v1/users', { email: address, fullName: `${role} person`, role, password }, headers);
    expect(res.status).toBe(201);
    const login = await api.post('/api/v1/auth/login', { email: address, password });
    return { id: res.body.id as string, email: address, as: api.as(login.body.token) };
  }

  function publishAudit(orgId: string, data: unknown, id = randomUUID()) {
    const envelope = { id, type: 'audit.recorded', orgId, occurredAt: new Date().toISOString(), data };
    channel.publish(stack.env.EVENTS_EXCHANGE, 'audit.recorded', Buffer.from(JSON.stringify(envelope)), {
      persistent: true,
      userId: amqpUser(infra.amqpUrl),
      contentType: 'application/json',
      messageId: id,
    });
    return channel.waitForConfirms();
  }

  describe('what identity records', () => {
    it('user.created names the actor, the new user, the request and the client address, never the password', async () => {
      const requestId = `audit-${randomUUID()}`;
      const agent = await createUser(acme.owner, 'agent', { 'x-request-id': requestId });
      const [entry] = (await auditEntries(acme.owner, 'user.created')).filter((e) => e.resourceId === agent.id);
      expect(entry).toEqual({
        id: expect.any(String),
        actorId: acme.user.id,
        actorType: 'user',
        action: 'user.created',
        resourceType: 'user',
        resourceId: agent.id,
        details: { email: agent.email, fullName: 'agent person', role: 'agent', invited: false },
        ip: expect.stringMatching(/127\.0\.0\.1|::1/),
        requestId,
        createdAt: expect.any(String),
      });
      expect(JSON.stringify(entry)).not.toContain(password);
    });

    it('an invitation is recorded as invited, without the link that signs the user in', async () => {
      const res = await acme.owner.post('/api/v1/users', { email: email('invitee'), fullName: 'Ivy Invitee', role: 'agent' });
      expect(res.status).toBe(201);
      const token = new URL(res.body.inviteUrl).searchParams.get('token')!;
      const [entry] = (await auditEntries(acme.owner, 'user.created')).filter((e) => e.resourceId === res.body.id);
      expect(entry.details.invited).toBe(true);
      expect(JSON.stringify(entry)).not.toContain(token);
    });

    it('a role change is user.role_changed with from/to; a profile edit is user.updated naming the fields; an edit that changes nothing records nothing', async () => {
      const agent = await createUser(acme.owner, 'agent');
      expect((await acme.owner.put(`/api/v1/users/${agent.id}`, { role: 'team_lead' })).status).toBe(200);
      const roleChange = await auditEntryFor(acme.owner, 'user.role_changed', agent.id);
      expect(roleChange).toEqual(
        expect.objectContaining({
          actorId: acme.user.id,
          resourceType: 'user',
          details: { email: agent.email, role: { from: 'agent', to: 'team_lead' }, changed: [] },
        }),
      );

      expect((await acme.owner.put(`/api/v1/users/${agent.id}`, { fullName: 'Renamed Person', phone: '+84 90 111 2222' })).status).toBe(200);
      const edit = await auditEntryFor(acme.owner, 'user.updated', agent.id);
      expect(edit.details).toEqual({ email: agent.email, changed: ['fullName', 'phone'] });

      expect((await acme.owner.put(`/api/v1/users/${agent.id}`, { fullName: 'Renamed Person' })).status).toBe(200);
      expect((await auditEntries(acme.owner, 'user.updated')).filter((e) => e.resourceId === agent.id)).toHaveLength(1);
    });

    it('deactivation (DELETE or status inactive) is user.deactivated; reactivation user.reactivated', async () => {
      const a = await createUser(acme.owner, 'agent');
      expect((await acme.owner.del(`/api/v1/users/${a.id}`)).status).toBe(204);
      expect((await auditEntryFor(acme.owner, 'user.deactivated', a.id)).details).toEqual({
        email: a.email,
        status: { from: 'active', to: 'inactive' },
      });

      expect((await acme.owner.put(`/api/v1/users/${a.id}`, { status: 'active' })).status).toBe(200);
      expect((await auditEntryFor(acme.owner, 'user.reactivated', a.id)).details.status).toEqual({ from: 'inactive', to: 'active' });
    });

    it('a refused change records nothing', async () => {
      const admin = await createUser(acme.owner, 'admin');
      // An admin may not touch an owner: 403, and no entry.
      expect((await admin.as.put(`/api/v1/users/${acme.user.id}`, { role: 'agent' })).status).toBe(403);
      expect((await auditEntries(acme.owner, 'user.role_changed')).filter((e) => e.resourceId === acme.user.id)).toEqual([]);
    });

    it('team.created, team.updated (renamed, members added and removed) and team.deleted', async () => {
      const m1 = await createUser(acme.owner, 'agent');
      const m2 = await createUser(acme.owner, 'agent');
      const team = await acme.owner.post('/api/v1/teams', { name: 'Sales', memberIds: [m1.id] });
      expect(team.status).toBe(201);
      expect((await auditEntryFor(acme.owner, 'team.created', team.body.id)).details).toEqual({ name: 'Sales', memberIds: [m1.id] });

      expect((await acme.owner.put(`/api/v1/teams/${team.body.id}`, { name: 'Sales North', memberIds: [m2.id] })).status).toBe(200);
      expect((await auditEntryFor(acme.owner, 'team.updated', team.body.id)).details).toEqual({
        name: 'Sales North',
        renamed: { from: 'Sales', to: 'Sales North' },
        membersAdded: [m2.id],
        membersRemoved: [m1.id],
      });

      expect((await acme.owner.del(`/api/v1/teams/${team.body.id}`)).status).toBe(204);
      expect((await auditEntryFor(acme.owner, 'team.deleted', team.body.id)).details).toEqual({ name: 'Sales North' });
      // Deleting it again is 404 and records nothing more.
      expect((await acme.owner.del(`/api/v1/teams/${team.body.id}`)).status).toBe(404);
      expect((await auditEntries(acme.owner, 'team.deleted')).filter((e) => e.resourceId === team.body.id)).toHaveLength(1);
    });

    it('api_key.generated carries the mask, never the key', async () => {
      const first = await acme.owner.post('/api/v1/settings/api-key/generate');
      const second = await acme.owner.post('/api/v1/settings/api-key/generate');
      expect(second.status).toBe(201);
      const entries = await auditEntries(acme.owner, 'api_key.generated');
      expect(entries.slice(0, 2).map((e) => e.details)).toEqual([
        { keyMask: second.body.keyMask, replacedPrevious: true },
        { keyMask: first.body.keyMask, replacedPrevious: expect.any(Boolean) },
      ]);
      const json = JSON.stringify(entries);
      expect(json).not.toContain(first.body.apiKey);
      expect(json).not.toContain(second.body.apiKey);
    });
  });

  describe('filters', () => {
    let admin: Awaited<ReturnType<typeof createUser>>;
    let teamId: string;

    beforeAll(async () => {
      admin = await createUser(acme.owner, 'admin');
      const team = await admin.as.post('/api/v1/teams', { name: 'Admin made' });
      teamId = team.body.id;
    });

    it('lists newest first with pagination', async () => {
      const res = await acme.owner.get('/api/v1/audit-log?limit=2');
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(2);
      expect(res.body.pagination).toEqual({ total: expect.any(Number), page: 1, limit: 2, pages: Math.ceil(res.body.pagination.total / 2) });
      expect(res.body.data[0].createdAt >= res.body.data[1].createdAt).toBe(true);
      const page2 = await acme.owner.get('/api/v1/audit-log?limit=2&page=2');
      expect(page2.body.data.map((e: { id: string }) => e.id)).not.toContain(res.body.data[0].id);
    });

    it('actorId keeps one actor’s entries', async () => {
      const res = await acme.owner.get(`/api/v1/audit-log?actorId=${admin.id}`);
      expect(res.status).toBe(200);
      expect(res.body.data.map((e: { action: string; resourceId: string }) => [e.action, e.resourceId])).toEqual([['team.created', teamId]]);
    });

    it('action matches exactly, or by a prefix ending in .*', async () => {
      const exact = await acme.owner.get('/api/v1/audit-log?action=team.created&limit=100');
      expect(exact.body.data.length).toBeGreaterThan(0);
      expect(exact.body.data.every((e: { action: string }) => e.action === 'team.created')).toBe(true);
      const prefix = await acme.owner.get('/api/v1/audit-log?action=user.*&limit=100');
      const actions = new Set(prefix.body.data.map((e: { action: string }) => e.action));
      expect([...actions].every((a) => (a as string).startsWith('user.'))).toBe(true);
      expect(actions.has('user.created')).toBe(true);
      expect(actions.has('user.role_changed')).toBe(true);
      // `user` without `.*` is an exact action that no entry has.
      expect((await acme.owner.get('/api/v1/audit-log?action=user')).body.data).toEqual([]);
    });

    it('from/to bound the time: a date covers its whole day', async () => {
      const today = new Date().toISOString().slice(0, 10);
      const all = (await acme.owner.get('/api/v1/audit-log?limit=1')).body.pagination.total;
      expect((await acme.owner.get(`/api/v1/audit-log?from=${today}&to=${today}&limit=1`)).body.pagination.total).toBe(all);
      const future = new Date(Date.now() + 60_000).toISOString();
      expect((await acme.owner.get(`/api/v1/audit-log?from=${encodeURIComponent(future)}`)).body.data).toEqual([]);
      expect((await acme.owner.get('/api/v1/audit-log?to=2020-01-01')).body.data).toEqual([]);
    });

    it.each([
      ['actorId=not-a-uuid', 'actorId'],
      ['action=User.Created', 'action'],
      ['action=user.*.x', 'action'],
      ['from=2024-02-30', 'from'],
      ['to=yesterday', 'to'],
      ['from=2024-05-02&to=2024-05-01', 'to'],
      ['page=abc', 'page'],
      ['limit=1.5', 'limit'],
    ])('?%s is a 400 naming %s', async (qs, field) => {
      const res = await acme.owner.get(`/api/v1/audit-log?${qs}`);
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    });
  });

  describe('who may read it', () => {
    it('admins and owners read it; team leads and agents get 403', async () => {
      const admin = await createUser(acme.owner, 'admin');
      const lead = await createUser(acme.owner, 'team_lead');
      const agent = await createUser(acme.owner, 'agent');
      expect((await admin.as.get('/api/v1/audit-log')).status).toBe(200);
      for (const who of [lead, agent]) {
        const res = await who.as.get('/api/v1/audit-log');
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('forbidden');
      }
      expect((await api.get('/api/v1/audit-log')).status).toBe(401);
    });

    it('an API key cannot read it (no such public route)', async () => {
      const key = await globex.owner.post('/api/v1/settings/api-key/generate');
      expect((await api.withKey(key.body.apiKey).get('/api/v1/audit-log')).status).toBe(401);
    });

    it("another organization's entries are never visible, whatever the filter", async () => {
      const theirs = await createUser(globex.owner, 'agent');
      const mine = await acme.owner.get('/api/v1/audit-log?limit=100');
      expect(JSON.stringify(mine.body)).not.toContain(theirs.id);
      expect((await acme.owner.get(`/api/v1/audit-log?actorId=${globex.user.id}`)).body.data).toEqual([]);
      const globexEntries = await auditEntries(globex.owner, 'user.created');
      expect(globexEntries.map((e) => e.resourceId)).toContain(theirs.id);
      expect(globexEntries.every((e) => e.actorId === globex.user.id)).toBe(true);
    });
  });

  describe('entries from other services (audit.recorded on the bus)', () => {
    it('are stored once per event id with the producer’s actor, resource and details', async () => {
      const id = randomUUID();
      const resourceId = randomUUID();
      const data = {
        actorId: acme.user.id,
        actorType: 'user',
        action: 'widget.deleted',
        resourceType: 'widget',
        resourceId,
        details: { name: 'Blue widget' },
        ip: '203.0.113.9',
        requestId: 'req-from-elsewhere',
      };
      // Delivered twice (a redelivery): one entry.
      await publishAudit(acme.user.orgId, data, id);
      await publishAudit(acme.user.orgId, data, id);
      const entry = await auditEntryFor(acme.owner, 'widget.deleted', resourceId);
      expect(entry).toEqual(expect.objectContaining({ id, ...data }));
      // A later event proves the duplicate had its turn.
      const marker = randomUUID();
      await publishAudit(acme.user.orgId, { ...data, resourceId: marker });
      await auditEntryFor(acme.owner, 'widget.deleted', marker);
      expect((await auditEntries(acme.owner, 'widget.deleted')).filter((e) => e.resourceId === resourceId)).toHaveLength(1);
    });

    it('one that does not fit its schema (no action, an unknown actor type) is dead-lettered with the fields named', async () => {
      const resourceId = randomUUID();
      const { action: _none, ...withoutAction } = eventData('audit.recorded', { resourceType: 'widget', resourceId });
      const bad = randomUUID();
      await publishAudit(acme.user.orgId, { ...withoutAction, actorType: 'root' }, bad);
      const parked = await eventually(() => channel.get(dlqName(`${stack.env.EVENTS_EXCHANGE}.identity.audit`), { noAck: true }));
      expect(JSON.parse(parked.content.toString()).id).toBe(bad);
      expect(parked.properties.headers?.['x-crm-error']).toBe(
        'audit.recorded v1 data does not match its schema: actorType: Invalid option: expected one of "user"|"api_key"|"system"; action: Invalid input: expected string, received undefined',
      );
      expect((await db.query('SELECT 1 FROM audit_log WHERE resource_id = $1', [resourceId])).rowCount).toBe(0);
      expect((await db.query('SELECT 1 FROM processed_events WHERE event_id = $1', [bad])).rowCount).toBe(0);
    });

    it('an action that is not <resource>.<verb> is dropped; an actor id that is no uuid is stored as none', async () => {
      const dropped = randomUUID();
      const droppedEvent = randomUUID();
      await publishAudit(
        acme.user.orgId,
        eventData('audit.recorded', { action: 'Widget Archived', resourceType: 'widget', resourceId: dropped }),
        droppedEvent,
      );
      const resourceId = randomUUID();
      await publishAudit(acme.user.orgId, {
        actorId: 'nobody',
        actorType: 'system',
        action: 'widget.archived',
        resourceType: 'widget',
        resourceId,
        details: {},
        ip: null,
        requestId: null,
      });
      const entry = await auditEntryFor(acme.owner, 'widget.archived', resourceId);
      expect(entry).toEqual(expect.objectContaining({ actorId: null, actorType: 'system', details: {}, ip: null, requestId: null }));
      // The dropped one was consumed (its id claimed) and left no entry.
      await eventually(async () => (await db.query('SELECT 1 FROM processed_events WHERE event_id = $1', [droppedEvent])).rowCount === 1);
      expect((await db.query('SELECT 1 FROM audit_log WHERE resource_id = $1', [dropped])).rowCount).toBe(0);
    });
  });

  describe(`retention (${180} days by default)`, () => {
    it('the sweep deletes an entry 181 days old and keeps one 179 days old', async () => {
      const old = randomUUID();
      const recent = randomUUID();
      const insert = (id: string, days: number) =>
        db.query(
          `INSERT INTO audit_log (id, org_id, actor_type, action, resource_type, created_at) VALUES ($1, $2, 'system', 'retention.probe', 'probe', now() - $3 * interval '1 day')`,
          [id, acme.user.orgId, days],
        );
      await insert(old, 181);
      await insert(recent, 179);
      await eventually(async () => (await db.query('SELECT 1 FROM audit_log WHERE id = $1', [old])).rowCount === 0, 10_000, 100);
      const ids = (await auditEntries(acme.owner, 'retention.probe')).map((e) => e.id);
      expect(ids).toEqual([recent]);
    });
  });
});
