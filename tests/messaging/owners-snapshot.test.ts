import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Pool } from '@crm/db';
import { createLogger } from '@crm/logger';
import { eventually, testPool } from '@crm/testing';
import { publishOwnersSnapshotOnce } from '../../services/messaging/src/assignment/owners-snapshot';
import { startStack, Stack } from '../support/stack';
import { member } from './inbox-support';
import { eventBus, fakeConnector, fakeCrm, orgWithKey } from './support';

// crm's contact visibility needs every conversation's owner; conversations stored before crm consumed the
// conversation events are published once per database as `conversation.owners_snapshot` (internal).
describe('conversation owners snapshot for crm (once per database)', () => {
  let stack: Stack;
  let db: Pool;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let connector: Awaited<ReturnType<typeof fakeConnector>>;
  let crm: Awaited<ReturnType<typeof fakeCrm>>;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-snap-'));
  const log = createLogger('owners-snapshot-test', 'warn');

  beforeAll(async () => {
    connector = await fakeConnector();
    crm = await fakeCrm();
    await crm.up();
    stack = await startStack({
      services: ['messaging'],
      serviceEnv: { messaging: { CONNECTOR_ADDR: connector.addr, CRM_ADDR: crm.addr, ATTACHMENTS_DIR: dir } },
    });
    db = testPool(stack.databaseUrl('messaging'), 2);
    bus = await eventBus(stack);
  }, 60_000);
  afterAll(async () => {
    await db?.end();
    await bus?.close();
    await stack?.stop();
    await connector?.down();
    await crm?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ran at start (nothing to publish then), publishes every conversation with its owner per org, and only once', async () => {
    expect((await db.query("SELECT name FROM backfills WHERE name = 'conversation_owners_snapshot_v1'")).rowCount).toBe(1);
    const a = await orgWithKey(stack.url, 'Snap A');
    const b = await orgWithKey(stack.url, 'Snap B');
    const agent = await member(stack.url, a.owner, 'agent', 'snap agent');
    const accountA = connector.account(a.orgId);
    const accountB = connector.account(b.orgId);
    await bus.inbound(a.orgId, { accountId: accountA, fromUid: 'one' });
    await bus.inbound(a.orgId, { accountId: accountA, fromUid: 'two' });
    await bus.inbound(b.orgId, { accountId: accountB, fromUid: 'three' });
    const listA = await eventually(async () => {
      const res = await a.owner.get('/api/v1/conversations?limit=10');
      return res.body.data.length === 2 ? res.body.data : undefined;
    });
    const one = listA.find((c: any) => c.threadId === 'one');
    expect((await a.owner.put(`/api/v1/conversations/${one.id}/assignee`, { userId: agent.id })).status).toBe(200);
    await eventually(async () => ((await b.owner.get('/api/v1/conversations')).body.data.length === 1 ? true : undefined));

    // As on a database whose conversations predate the projection: the job has not run there yet.
    await db.query('DELETE FROM backfills');
    await publishOwnersSnapshotOnce(db, log);
    await publishOwnersSnapshotOnce(db, log);
    // The marker: both runs have returned, so whatever they enqueued is committed in the outbox; once the bus has
    // every one of those events, a count taken there is complete. One event per org, the second run added none.
    const { rows } = await db.query<{ id: string }>("SELECT id FROM outbox WHERE type = 'conversation.owners_snapshot'");
    expect(rows).toHaveLength(2);
    const snapshots = await eventually(async () => {
      const s = bus.of('conversation.owners_snapshot');
      return rows.every((r) => s.some((e) => e.id === r.id)) ? s : undefined;
    });
    expect(snapshots).toHaveLength(2);
    const ofA = snapshots.find((e) => e.orgId === a.orgId)!;
    expect(ofA.data.conversations).toHaveLength(2);
    expect(ofA.data.conversations).toEqual(
      expect.arrayContaining([
        { conversationId: one.id, contactId: one.contactId, chatnetAccountId: accountA, assigneeId: agent.id },
        expect.objectContaining({ conversationId: listA.find((c: any) => c.threadId === 'two').id, chatnetAccountId: accountA, assigneeId: null }),
      ]),
    );
    expect(snapshots.find((e) => e.orgId === b.orgId)!.data.conversations).toEqual([
      expect.objectContaining({ chatnetAccountId: accountB, assigneeId: null }),
    ]);
  });
});
