import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { migrate, Pool, withTransaction } from '@crm/db';
import { createTestDatabase, TestDatabase, testPool } from '@crm/testing';
import { insertInboundBatch, NewThreadInbound } from '../src/conversations/messages.repo';

// The batch statement of the inbound consumer (one round trip for every message of a batch whose thread has a
// conversation) must leave conversations and messages exactly as storing the messages one by one did.
describe('inbound batch statement', () => {
  let db: TestDatabase;
  let pool: Pool;
  const org = randomUUID();
  const other = randomUUID();
  const account = randomUUID();
  const t0 = Date.parse('2026-11-26T08:00:00Z');

  beforeAll(async () => {
    db = await createTestDatabase('msg_inbound_batch');
    pool = testPool(db.url, 4);
    await migrate(pool, path.join(__dirname, '..', 'migrations'));
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  async function conversation(orgId: string, threadId: string, o: { status?: string; threadType?: string; lastAt?: Date; name?: string } = {}) {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO conversations (id, org_id, chatnet_account_id, thread_type, thread_id, contact_chatnet_uid, contact_name, status, last_message_at, last_activity_at)
       VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8, now())`,
      [id, orgId, account, o.threadType ?? 'user', threadId, o.name ?? 'Lan', o.status ?? 'active', o.lastAt ?? null],
    );
    return id;
  }
  const msg = (threadId: string, content: string, secs: number, o: Partial<NewThreadInbound> = {}): NewThreadInbound => ({
    id: randomUUID(),
    orgId: org,
    accountId: account,
    chatnetMessageId: `net-${randomUUID()}`,
    content,
    contentType: 'text',
    senderUid: threadId,
    senderName: 'Lan',
    sentAt: new Date(t0 + secs * 1000),
    senderContactId: null,
    groupName: '',
    cliMsgId: '',
    threadType: 'user',
    threadId,
    ...o,
  });
  const conv = async (id: string) => (await pool.query('SELECT * FROM conversations WHERE id = $1', [id])).rows[0];
  const run = (items: NewThreadInbound[]) => withTransaction(pool, (tx) => insertInboundBatch(tx, items));

  it('stores each message once, bumps each conversation by its count, newest message last whatever the order', async () => {
    const c1 = await conversation(org, 'u-1', { status: 'closed' });
    const c2 = await conversation(org, 'u-2');
    const dup = 'net-dup';
    const items = [
      msg('u-1', 'second', 2),
      msg('u-2', 'hello', 1),
      msg('u-1', 'first', 1),
      msg('u-1', 'again', 2, { chatnetMessageId: dup }),
      msg('u-1', 'copy', 3, { chatnetMessageId: dup }), // the same network id twice in one batch: stored once
      msg('u-new', 'no conversation yet', 1),
      msg('u-1', 'another org', 1, { orgId: other }), // another org's thread of the same id: not this conversation
    ];
    const out = await run(items);

    expect(out.map((r) => r && { conversationId: r.conversationId, stored: r.stored, status: r.status })).toEqual([
      { conversationId: c1, stored: true, status: 'closed' },
      { conversationId: c2, stored: true, status: 'active' },
      { conversationId: c1, stored: true, status: 'closed' },
      { conversationId: c1, stored: true, status: 'closed' },
      { conversationId: c1, stored: false, status: 'closed' },
      undefined,
      undefined,
    ]);
    const one = await conv(c1);
    expect([one.message_count, one.unread_count, one.unreplied_count]).toEqual([3, 3, 3]);
    // Two messages share the newest time: the later delivered wins, as storing them one by one did.
    expect([one.last_message_content, one.last_message_id, one.last_message_at.getTime()]).toEqual(['again', items[3].id, t0 + 2000]);
    expect((await conv(c2)).message_count).toBe(1);
    const stored = await pool.query('SELECT id FROM messages WHERE conversation_id = $1 ORDER BY sent_at, content', [c1]);
    expect(stored.rows.map((r) => r.id).sort()).toEqual([items[0].id, items[2].id, items[3].id].sort());

    // Redelivered: nothing stored, nothing counted twice.
    const again = await run(items.slice(0, 3));
    expect(again.map((r) => r?.stored)).toEqual([false, false, false]);
    expect((await conv(c1)).message_count).toBe(3);
  });

  it('keeps a newer last message, and names a group after its newest named message', async () => {
    const g = await conversation(org, 'g-1', { threadType: 'group', lastAt: new Date(t0 + 60_000), name: 'Old name' });
    await run([msg('g-1', 'late', 5, { threadType: 'group', groupName: 'Late name' })]);
    let row = await conv(g);
    expect([row.contact_name, row.last_message_at.getTime(), row.message_count]).toEqual(['Old name', t0 + 60_000, 1]);

    await run([
      msg('g-1', 'named', 70, { threadType: 'group', groupName: 'New name' }),
      msg('g-1', 'unnamed', 80, { threadType: 'group', groupName: '' }),
    ]);
    row = await conv(g);
    expect([row.contact_name, row.last_message_content, row.message_count]).toEqual(['New name', 'unnamed', 3]);
  });
});
