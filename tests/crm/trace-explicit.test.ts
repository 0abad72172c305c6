import { randomBytes } from 'node:crypto';
import { Client as PgClient } from 'pg';
import {
  clearRedisPrefix,
  createTestDatabase,
  deleteRabbitPrefix,
  eventually,
  freePort,
  infra,
  internalAuthSeed,
  TestDatabase,
  uniqueName,
} from '@crm/testing';
import { client, newOrg, type Client } from '../support/http';
import { ServiceProcesses } from '../support/service-processes';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

/**
 * crm runs without AsyncLocalStorage unless spans are exported (its main.ts) and passes its trace context explicitly.
 * Started as `npm start` starts it (its own process, nothing exported), the events it enqueues still carry the trace
 * id of the API call that caused them, read from its outbox: a note's (a handler's ctx → the event), an appointment's
 * and the lead score it moves (ctx → the contact writer → lead scoring's announcement), a deletion's contact.deleted
 * and its audit entry.
 */
describe('trace context in crm without an active context (nothing exported)', () => {
  const procs = new ServiceProcesses();
  const dbs: Record<string, TestDatabase> = {};
  const prefix = `${uniqueName('t')}:`;
  const exchange = uniqueName('t_events');
  let owner: Client;
  let outbox: PgClient;

  const traced = () => {
    const traceId = randomBytes(16).toString('hex');
    return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
  };
  /** The trace id of each outbox row of `type` whose data matches `where` (a jsonb containment), in order. */
  const tracesOf = async (type: string, where: Record<string, unknown>) => {
    const { rows } = await outbox.query<{ traceparent: string | null }>(
      'SELECT traceparent FROM outbox WHERE type = $1 AND data @> $2::jsonb ORDER BY seq',
      [type, JSON.stringify(where)],
    );
    return rows.map((r) => TRACEPARENT.exec(r.traceparent ?? '')?.[1] ?? r.traceparent);
  };

  beforeAll(async () => {
    for (const s of ['identity', 'crm']) dbs[s] = await createTestDatabase(s);
    const ports = { identity: await freePort(), crm: await freePort(), gateway: await freePort() };
    const common = {
      JWT_SECRET: randomBytes(32).toString('hex'),
      INTERNAL_AUTH_SEED: internalAuthSeed,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      REDIS_PREFIX: prefix,
      REDIS_URL: infra.redisUrl,
      AMQP_URL: infra.amqpUrl,
      EVENTS_EXCHANGE: exchange,
      LOG_LEVEL: 'warn',
      SIGNUP_ENABLED: 'true',
      METRICS_PORT: '0',
      IDENTITY_ADDR: `127.0.0.1:${ports.identity}`,
      CRM_ADDR: `127.0.0.1:${ports.crm}`,
    };
    const service = (s: 'identity' | 'crm') =>
      procs.launch(s, { ...common, DATABASE_URL: dbs[s].url, GRPC_PORT: String(ports[s]), LOG_LEVEL: 'info' }, `${s} listening`);
    await Promise.all([service('identity'), service('crm')]);
    await procs.launch('gateway', { ...common, PORT: String(ports.gateway), SERVICES: 'identity,crm', LOG_LEVEL: 'info' }, 'gateway listening');
    ({ owner } = await newOrg(client(`http://127.0.0.1:${ports.gateway}`), 'Explicit Crm Trace'));
    outbox = new PgClient({ connectionString: dbs.crm.url });
    await outbox.connect();
  }, 60_000);

  afterAll(async () => {
    await outbox?.end();
    await procs.stop();
    for (const db of Object.values(dbs)) await db.drop();
    await clearRedisPrefix(prefix);
    await deleteRabbitPrefix(infra.amqpUrl, exchange);
  });

  const newContact = async (name: string) => {
    const created = await owner.post('/api/v1/contacts', { name });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };

  it("a note's contact.note_created carries the trace id of the call that added it", async () => {
    const contactId = await newContact('Nora Note');
    const { traceId, traceparent } = traced();
    const added = await owner.post(`/api/v1/contacts/${contactId}/notes`, { content: 'Called back' }, { traceparent });
    expect(added.status).toBe(201);
    expect(await tracesOf('contact.note_created', { contactId })).toEqual([traceId]);
  });

  it("an appointment's event, and the lead score it moves, carry the trace id of the call that booked it", async () => {
    const rule = await owner.post('/api/v1/scoring/rules', { name: 'Booked', condition: 'appointment_created', points: 40 });
    expect(rule.status).toBe(201);
    // The org-wide recompute the rule asks for is done first: what it announces is a trace of its own.
    await eventually(async () => ((await owner.get('/api/v1/scoring/config')).body.recomputing === false ? true : undefined), 15_000);
    const contactId = await newContact('Abe Appointment');
    const { traceId, traceparent } = traced();
    const booked = await owner.post('/api/v1/appointments', { contactId, title: 'Demo', scheduledAt: '2031-05-01T08:00:00Z' }, { traceparent });
    expect(booked.status).toBe(201);
    expect(await tracesOf('appointment.created', { appointment: { contactId } })).toEqual([traceId]);
    expect(await tracesOf('contact.updated', { contact: { id: contactId, leadScore: 40 }, changes: ['leadScore'] })).toEqual([traceId]);
  });

  it("a deleted contact's contact.deleted and its audit entry carry the trace id of the call that deleted it", async () => {
    const contactId = await newContact('Dee Leted');
    const { traceId, traceparent } = traced();
    expect((await owner.del(`/api/v1/contacts/${contactId}`, { traceparent })).status).toBe(204);
    expect(await tracesOf('contact.deleted', { id: contactId })).toEqual([traceId]);
    expect(await tracesOf('audit.recorded', { action: 'contact.deleted', resourceId: contactId })).toEqual([traceId]);
  });
});
