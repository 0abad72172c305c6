import { eventually, infra } from '@crm/testing';
import { startStack, type ServiceName, type Stack } from '../support/stack';
import { client, newOrg } from '../support/http';
import { postgresProxy, type PostgresProxy } from '../support/postgres-proxy';
import { connectPatiently } from '../support/patient-client';

// Issue #28 item 8: deployed, each service's DATABASE_URL is PgBouncer in transaction pooling and DATABASE_DIRECT_URL
// is PostgreSQL itself. The pooler hands a server connection to another client when a transaction ends, so whatever
// outlives a transaction must take the direct URL: LISTEN (the notifications would reach whoever holds that server
// connection next), migrations' session advisory lock, creating the database (the `postgres` maintenance database),
// session-level SET and start-up `options`. Here DATABASE_URL is a proxy that records every session's start-up
// parameters and each such statement, and DATABASE_DIRECT_URL is the server: the services work through the proxy, send
// nothing through it that holds a session, and still hear their notifications on the direct connections.
const SERVICES: ServiceName[] = ['crm', 'messaging', 'chatnet-connector', 'automation', 'ai', 'webhooks'];
/** The services with a NotifyListener (timers, claim loops) besides the outbox relay every one of SERVICES runs. */
const LISTENERS: ServiceName[] = ['crm', 'messaging', 'automation', 'webhooks'];
/** packages/events RELAY_APPLICATION_NAME: how the relay's session shows in pg_stat_activity. */
const RELAY = 'crm-outbox-relay';

describe('services with DATABASE_URL at a transaction pooler and DATABASE_DIRECT_URL at PostgreSQL', () => {
  let pooler: PostgresProxy;
  let stack: Stack;
  let owner: ReturnType<ReturnType<typeof client>['as']>;
  const database = (name: ServiceName) => new URL(stack.databaseUrl(name)).pathname.slice(1);

  beforeAll(async () => {
    pooler = await postgresProxy(new URL(infra.databaseUrl));
    stack = await startStack({
      services: SERVICES,
      databaseUrl: pooler.url,
      directDatabaseUrl: (url) => url,
      // crm's report worker looks for work every 10 minutes: a report ready sooner was announced by NOTIFY.
      serviceEnv: { crm: { REPORT_POLL_MS: '600000' } },
    });
    ({ owner } = await newOrg(client(stack.url), 'Pooled'));
  }, 120_000);
  // Seven services, their databases, queues and keys to remove: over 30 s once on a loaded machine.
  afterAll(async () => {
    await stack?.stop();
    await pooler?.close();
  }, 60_000);

  it('does its work through the pooler, in every database: an inbound message is stored and listed', async () => {
    const accountId = (await owner.post('/api/v1/chatnet-accounts', { displayName: 'Line' })).body.id;
    expect((await owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    expect((await owner.post(`/sandbox/accounts/${accountId}/scan`, {})).body.status).toBe('connected');
    expect(
      (await owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: 'pooled-1', fromName: 'Lan', content: 'through the pooler' })).status,
    ).toBe(200);
    await eventually(async () => (await owner.get('/api/v1/conversations?limit=20')).body.data?.length === 1, 15_000);
    const used = new Set(pooler.sessions.filter((s) => s.statements > 0).map((s) => s.database));
    for (const name of ['identity', ...SERVICES] as ServiceName[]) expect({ name, pooled: used.has(database(name)) }).toEqual({ name, pooled: true });
  });

  it("gives messaging's pooled sessions its planner settings without start-up options (migration 020: the database's own)", async () => {
    const db = await connectPatiently(pooler.url(stack.databaseUrl('messaging')));
    try {
      const setting = async (name: string) => (await db.query<{ v: string }>('SELECT current_setting($1) AS v', [name])).rows[0].v;
      expect({ parallel: await setting('max_parallel_workers_per_gather'), randomPageCost: await setting('random_page_cost') }).toEqual({
        parallel: '0',
        randomPageCost: '1.1',
      });
    } finally {
      await db.end();
    }
  });

  it("still hears notifications: a report is generated at once, not at the worker's 10-minute poll", async () => {
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const created = await owner.post('/api/v1/analytics/custom', {
      name: 'By source',
      metrics: ['lead_count'],
      dimensions: ['source'],
      dateFrom: day(-1),
      dateTo: day(1),
    });
    expect(created.status).toBe(201);
    const report = await eventually(async () => {
      const r = await owner.get(`/api/v1/analytics/custom/${created.body.id}`);
      return r.body.status !== 'generating' && r.body;
    }, 20_000);
    expect(report.status).toBe('ready');
  });

  it('sends nothing that holds a session through the pooler: no LISTEN, session lock or SET, no start-up options, no maintenance database', () => {
    expect(pooler.sessions.flatMap((s) => s.sessionState.map((sql) => `${s.database}: ${sql}`))).toEqual([]);
    expect(pooler.sessions.filter((s) => s.options !== undefined).map((s) => `${s.database}: ${s.options}`)).toEqual([]);
    expect(pooler.sessions.filter((s) => s.database === 'postgres')).toEqual([]);
  });

  it('holds the relays and LISTEN connections on PostgreSQL directly', async () => {
    const admin = await connectPatiently(infra.databaseUrl);
    try {
      const { rows } = await admin.query<{ datname: string; application_name: string; query: string; client_port: number }>(
        'SELECT datname, application_name, query, client_port FROM pg_stat_activity WHERE datname = ANY($1)',
        [SERVICES.map(database)],
      );
      const proxied = new Set(pooler.sessions.map((s) => s.serverSidePort));
      const direct = rows.filter((r) => !proxied.has(r.client_port));
      for (const name of SERVICES) {
        const own = direct.filter((r) => r.datname === database(name));
        expect({ name, relay: own.some((r) => r.application_name === RELAY) }).toEqual({ name, relay: true });
        if (LISTENERS.includes(name)) expect({ name, listening: own.some((r) => /^LISTEN /.test(r.query)) }).toEqual({ name, listening: true });
      }
    } finally {
      await admin.end();
    }
  });
});
