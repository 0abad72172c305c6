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
  /** While set, crm fails every call (after its usual wait): new threads are stored without a contact. */
  let crmFails = false;

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
        if (crmFails) throw new Error('crm is having a bad day');
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

  it('a burst of new threads, each writing twice, and a new group: one conversation each, announced once, every message in it in order', async () => {
    // A batch's new threads get their conversations set-wise, then their messages stored with one statement (issue
    // #28): two messages of one new thread in a batch make one conversation, and both land in it in order.
    const a = await orgWithKey(stack.url, 'Two Each');
    const account = connector.account(a.orgId);
    const firstAndSecond = (i: number) => [
      { accountId: account, fromUid: `uid-twice-${i}`, fromName: `Twice ${i}`, content: `first ${i}` },
      { accountId: account, fromUid: `uid-twice-${i}`, fromName: `Twice ${i}`, content: `second ${i}` },
    ];
    const group = (n: number) => ({
      accountId: account,
      fromUid: `member-${n}`,
      fromName: `Member ${n}`,
      threadType: 'group' as const,
      threadId: 'grp-new',
      groupName: 'Buyers',
      content: `group ${n}`,
    });
    // In order per thread (the connector publishes a thread's messages in order), threads at once.
    await Promise.all([
      ...Array.from({ length: 10 }, async (_, i) => {
        for (const m of firstAndSecond(i)) await bus.inbound(a.orgId, m);
      }),
      (async () => {
        for (const n of [1, 2]) await bus.inbound(a.orgId, group(n));
      })(),
    ]);
    const list = await eventually(async () => {
      const r = (await a.owner.get('/api/v1/conversations?limit=50')).body.data as Array<{ id: string; contactName: string; messageCount: number }>;
      return r.length === 11 && r.every((c) => c.messageCount === 2) ? r : undefined;
    }, 20_000);
    expect(list.map((c) => c.contactName).sort()).toEqual(['Buyers', ...Array.from({ length: 10 }, (_, i) => `Twice ${i}`)].sort());
    for (const c of list) {
      const detail = (await a.owner.get(`/api/v1/conversations/${c.id}`)).body as { timeline: Array<{ kind: string; content?: string }> };
      const said = detail.timeline.filter((t) => t.kind === 'message').map((t) => t.content);
      expect(said.sort()).toEqual(
        c.contactName === 'Buyers' ? ['group 1', 'group 2'] : [`first ${c.contactName.slice(6)}`, `second ${c.contactName.slice(6)}`],
      );
    }
    const created = await eventually(async () => {
      const mine = bus.of('conversation.created').filter((e) => e.orgId === a.orgId);
      return mine.length >= 11 ? mine : undefined;
    });
    expect(created.map((e) => e.data.id).sort()).toEqual(list.map((c) => c.id).sort());
    const received = await eventually(async () => {
      const mine = bus.of('message.received').filter((e) => e.orgId === a.orgId);
      return mine.length >= 22 ? mine : undefined;
    });
    expect(received).toHaveLength(22);
    // Each names its conversation, and a one-to-one thread's its contact.
    for (const e of received) {
      const conv = list.find((c) => c.id === e.data.conversationId)!;
      expect(conv).toBeDefined();
      if (conv.contactName !== 'Buyers') expect(e.data.contactId).toEqual(expect.any(String));
    }
  });

  it('new threads while crm fails: stored without a contact, and each asks for its link once when made (once more at most, for its next message in a later batch)', async () => {
    const a = await orgWithKey(stack.url, 'Unlinked');
    const account = connector.account(a.orgId);
    crmFails = true;
    try {
      await Promise.all(
        Array.from({ length: 6 }, async (_, i) => {
          for (const content of ['one', 'two'])
            await bus.inbound(a.orgId, { accountId: account, fromUid: `uid-unlinked-${i}`, fromName: `Unlinked ${i}`, content });
        }),
      );
      const list = await eventually(async () => {
        const r = (await a.owner.get('/api/v1/conversations?limit=50')).body.data as Array<{
          id: string;
          contactId: string | null;
          messageCount: number;
        }>;
        return r.length === 6 && r.every((c) => c.messageCount === 2) ? r : undefined;
      }, 20_000);
      expect(list.every((c) => c.contactId === null)).toBe(true);
      const { rows } = await watch.query<{ conversation_id: string; n: number }>(
        `SELECT data->>'conversationId' AS conversation_id, count(*)::int AS n FROM outbox
          WHERE type = 'messaging.contact_link' AND data->>'conversationId' = ANY($1::text[]) GROUP BY 1`,
        [list.map((c) => c.id)],
      );
      // Made by the batch: its request goes with the conversation, and the batch's own messages ask no more. A second
      // message in a later batch finds it still unlinked and asks again, at most once per ten minutes.
      expect(rows.map((r) => r.conversation_id).sort()).toEqual(list.map((c) => c.id).sort());
      expect(rows.filter((r) => r.n < 1 || r.n > 2)).toEqual([]);
    } finally {
      crmFails = false;
    }
  });
});
