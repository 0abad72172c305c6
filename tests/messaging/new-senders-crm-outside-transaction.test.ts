import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Pool } from 'pg';
import { eventually, freePort } from '@crm/testing';
import { startStack, Stack } from '../support/stack';
import { eventBus, fakeConnector, fakeCrm, orgWithKey } from './support';

// Issue #28 item 4: a burst of new senders while crm is slow. crm is asked before the inbound consumer's
// transaction opens, so no messaging transaction waits on it (on the old path each batch held its transaction,
// its connection and its locks open for the whole crm call, and timed out under warm-up), and every conversation
// is stored with its contact.
describe('new senders: crm is asked outside the consumer transaction', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  let watch: Pool;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-new-senders-'));
  /**
   * Messaging's transactions seen waiting (idle in transaction for 450 ms or more) while crm took 600 ms to answer:
   * a transaction held open on crm is idle all that time, while a short gap between two statements of a busy
   * process stays far below it (150 ms was reached once on a loaded CI machine).
   */
  const heldOpen: number[] = [];

  beforeAll(async () => {
    connector = await fakeConnector();
    // A slow crm that looks, while it answers, at what messaging's database is holding open.
    crm = await fakeCrm(await freePort(), {
      beforeUpsert: async () => {
        await new Promise((r) => setTimeout(r, 600));
        const { rows } = await watch.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
              AND state LIKE 'idle in transaction%' AND state_change < now() - interval '450 milliseconds'`,
        );
        heldOpen.push(rows[0].n);
      },
    });
    await crm.up();
    stack = await startStack({
      services: ['messaging'],
      serviceEnv: { messaging: { CONNECTOR_ADDR: connector.addr, CRM_ADDR: crm.addr, ATTACHMENTS_DIR: dir, CRM_DEADLINE_MS: '3000' } },
    });
    watch = new Pool({ connectionString: stack.databaseUrl('messaging'), max: 1 });
    bus = await eventBus(stack);
  }, 60_000);
  afterAll(async () => {
    await bus?.close();
    await watch?.end();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  it('20 new senders at once: each conversation has its contact, and no transaction waited on crm', async () => {
    const a = await orgWithKey(stack.url, 'Burst');
    const account = connector.account(a.orgId);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => bus.inbound(a.orgId, { accountId: account, fromUid: `uid-new-${i}`, fromName: `Lead ${i}` })),
    );
    const convs = await eventually(async () => {
      const list = (await a.owner.get('/api/v1/conversations?limit=50')).body.data as Array<{ contactId: string | null }>;
      return list.length === 20 && list.every((c) => c.contactId) ? list : undefined;
    }, 20_000);
    expect(convs).toHaveLength(20);
    // Every sender was asked for (a batch's new threads in one call: a look at the database per call).
    expect(new Set(crm.upserts.map((u) => u.chatnetUid)).size).toBe(20);
    expect(heldOpen.length).toBeGreaterThanOrEqual(1);
    expect(Math.max(...heldOpen)).toBe(0);
  });
});
