import { eventually, infra } from '@crm/testing';
import { startStack, type ServiceName, type Stack } from '../support/stack';
import { client, newOrg } from '../support/http';
import { connectPatiently } from '../support/patient-client';

// A managed PostgreSQL's failover or restart ends every connection at once (pg_terminate_backend does the same).
// Every service must live through it: answer 503 while it reconnects, then carry on, losing nothing it accepted.
// Before the fix, a pooled client checked out at that moment (a consumer's batch, a claim loop) emitted an
// unheard 'error' and Node ended the process (here: the jest worker, failing this file).
const SERVICES: ServiceName[] = ['crm', 'messaging', 'chatnet-connector', 'automation', 'ai', 'webhooks'];

describe('every PostgreSQL connection terminated under load', () => {
  let stack: Stack;
  let owner: ReturnType<ReturnType<typeof client>['as']>;
  let accountId: string;

  beforeAll(async () => {
    stack = await startStack({ services: SERVICES, env: { SIGNUP_ENABLED: 'true' } });
    ({ owner } = await newOrg(client(stack.url), 'Failover Org'));
    accountId = (await owner.post('/api/v1/chatnet-accounts', { displayName: 'Line' })).body.id;
    expect((await owner.post(`/api/v1/chatnet-accounts/${accountId}/login`)).status).toBe(200);
    expect((await owner.post(`/sandbox/accounts/${accountId}/scan`, {})).body.status).toBe('connected');
  }, 120_000);
  afterAll(() => stack?.stop());

  /** Ends every backend connected to one of this stack's databases; returns how many it ended. */
  async function terminateBackends(): Promise<number> {
    const names = ['identity', ...SERVICES].map((s) => new URL(stack.databaseUrl(s as ServiceName)).pathname.slice(1));
    const admin = await connectPatiently(infra.databaseUrl);
    try {
      const r = await admin.query('SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = ANY($1)', [
        names,
      ]);
      return Number(r.rows[0].n);
    } finally {
      await admin.end();
    }
  }

  it('no service dies, every accepted message is stored once, and new messages flow afterwards', async () => {
    const run = Date.now().toString(36);
    const statuses: number[] = [];
    const accepted: string[] = [];
    const sends: Promise<void>[] = [];
    let terminated = 0;
    // 40 msg/s for 3 s from 20 senders, every backend ended twice in the middle.
    for (let i = 0; i < 120; i++) {
      const content = `failover ${run} ${i}`;
      sends.push(
        owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: `fo-${i % 20}`, fromName: `Sender ${i % 20}`, content }).then((r) => {
          statuses.push(r.status);
          if (r.status === 200) accepted.push(content);
        }),
      );
      if (i === 40 || i === 80) terminated += await terminateBackends();
      await new Promise((r) => setTimeout(r, 25));
    }
    await Promise.all(sends);
    expect(terminated).toBeGreaterThan(10);
    // Only 200s, or 503s saying to retry (a request caught on a connection as it was ended).
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(accepted.length).toBeGreaterThan(100);

    const messaging = await connectPatiently(stack.databaseUrl('messaging'));
    try {
      const stored = async () =>
        (
          await messaging.query<{ content: string; n: number }>(
            'SELECT content, count(*)::int AS n FROM messages WHERE content LIKE $1 GROUP BY content',
            [`failover ${run} %`],
          )
        ).rows;
      const rows = await eventually(async () => {
        const r = await stored();
        return r.length >= accepted.length ? r : undefined;
      }, 20_000);
      expect(rows.filter((r) => r.n !== 1)).toEqual([]);
      expect(new Set(rows.map((r) => r.content))).toEqual(new Set(accepted));
    } finally {
      await messaging.end();
    }

    // Afterwards the whole path works as before: a new message reaches the inbox through the API.
    const after = await owner.post(`/sandbox/accounts/${accountId}/inbound`, { fromUid: 'fo-after', fromName: 'After', content: `after ${run}` });
    expect(after.status).toBe(200);
    await eventually(async () => {
      const list = await owner.get(`/api/v1/conversations?search=${encodeURIComponent(`after ${run}`)}`);
      return list.status === 200 && list.body.data.length === 1 ? list : undefined;
    }, 10_000);
  }, 90_000);
});
