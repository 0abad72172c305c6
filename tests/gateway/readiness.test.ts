import { eventually, infra } from '@crm/testing';
import { client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { connectPatiently } from '../support/patient-client';

/**
 * /readyz asks every configured service through a connection it keeps: a stopped service turns it 503
 * naming that service, and the same check sees the service again once it is back on its port. A service that
 * is up but cannot reach its own PostgreSQL answers its health check NOT_SERVING, and shows false the same way.
 */
describe('gateway /readyz', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ services: ['crm'] });
  }, 60_000);
  afterAll(() => stack?.stop());

  it('is 200 while every service answers, 503 naming a stopped one, 200 again after it restarts', async () => {
    const api = client(stack.url);
    const up = await api.get('/readyz');
    expect(up.status).toBe(200);
    expect(up.body).toEqual({ status: 'ready', checks: { redis: true, identity: true, crm: true } });

    await stack.stopService('crm');
    const down = await api.get('/readyz');
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ status: 'not_ready', checks: { redis: true, identity: true, crm: false } });

    await stack.startService('crm');
    // The kept channel reconnects with backoff, so "back" may take a moment.
    const back = await eventually(
      async () => {
        const r = await api.get('/readyz');
        if (r.status !== 200) throw new Error(`readyz ${r.status} ${JSON.stringify(r.body)}`);
        return r;
      },
      20_000,
      200,
    );
    expect(back.body.checks.crm).toBe(true);
  }, 60_000);

  it('is 503 naming a service that cannot reach its database, 200 again once the database takes connections', async () => {
    const api = client(stack.url);
    const database = new URL(stack.databaseUrl('crm')).pathname.slice(1);
    const admin = await connectPatiently(infra.databaseUrl);
    // Only this test's own database: new connections refused, the service's open ones ended.
    const refuse = async (refused: boolean) => {
      await admin.query(`ALTER DATABASE "${database}" WITH ALLOW_CONNECTIONS ${refused ? 'false' : 'true'}`);
      if (refused) await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [database]);
    };
    const readyz = (status: number) =>
      eventually(
        async () => {
          const r = await api.get('/readyz');
          return r.status === status ? r : undefined;
        },
        20_000,
        200,
      );
    try {
      expect((await readyz(200)).body.checks.crm).toBe(true);
      await refuse(true);
      const down = await readyz(503);
      expect(down.body).toEqual({ status: 'not_ready', checks: { redis: true, identity: true, crm: false } });
      await refuse(false);
      expect((await readyz(200)).body).toEqual({ status: 'ready', checks: { redis: true, identity: true, crm: true } });
    } finally {
      await refuse(false).catch(() => undefined);
      await admin.end();
    }
  }, 60_000);
});
