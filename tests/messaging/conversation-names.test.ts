import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { migrate, type Pool } from '@crm/db';
import { createTestDatabase, testPool, type TestDatabase } from '@crm/testing';
import { list } from '../../services/messaging/src/conversations/conversations.repo';

// Issue #28 (migration 036): a conversation's searched name and phone live in conversation_names, written by
// triggers, so the update every message makes to its conversation no longer re-enters the name into two GIN
// indexes. What the search finds and when updated_at moves must stay as they were.
describe('conversation names: the searched name off the conversation row', () => {
  const migrations = path.join(__dirname, '../../services/messaging/migrations');
  let db: TestDatabase;
  let pool: Pool;
  let before036: string;
  const org = randomUUID();
  const otherOrg = randomUUID();
  const account = randomUUID();

  async function conversation(orgId: string, name: string, phone = ''): Promise<string> {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO conversations (id, org_id, chatnet_account_id, thread_type, thread_id, contact_name, contact_phone)
       VALUES ($1, $2, $3, 'user', $4, $5, $6)`,
      [id, orgId, account, `t-${id}`, name, phone],
    );
    return id;
  }
  const names = async (id: string) =>
    (await pool.query('SELECT org_id, search_text, xmin::text AS version FROM conversation_names WHERE conversation_id = $1', [id])).rows[0];
  const updatedAt = async (id: string) => (await pool.query('SELECT updated_at FROM conversations WHERE id = $1', [id])).rows[0].updated_at as Date;
  const found = async (orgId: string, words: string[], phoneDigits?: string) =>
    (await list(pool, orgId, { page: 1, limit: 50, search: { words, phoneDigits, window: 200 } })).data.map((c) => c.id);

  beforeAll(async () => {
    db = await createTestDatabase('messaging_names');
    pool = testPool(db.url);
    // The database as it was before 036, with conversations in it, then migrated on: the migration carries them over.
    before036 = mkdtempSync(path.join(tmpdir(), 'messaging-035-'));
    for (const f of readdirSync(migrations).filter((f) => f < '036')) cpSync(path.join(migrations, f), path.join(before036, f));
    await migrate(pool, before036);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
    if (before036) rmSync(before036, { recursive: true, force: true });
  });

  it('carries the existing conversations over and drops the column from the row', async () => {
    const existing = await conversation(org, 'Trần Thị Bích', '+84 901 234 567');
    await migrate(pool, migrations);
    expect(await names(existing)).toEqual(expect.objectContaining({ org_id: org, search_text: 'tran thi bich +84 901 234 567' }));
    const columns = await pool.query(`SELECT 1 FROM information_schema.columns WHERE table_name = 'conversations' AND column_name = 'search_text'`);
    expect(columns.rowCount).toBe(0);
    // Searches read a GIN pending list in full: the names' lists stay small.
    const options = await pool.query(`SELECT relname, reloptions FROM pg_class WHERE relname LIKE 'conversation_names_%_idx' ORDER BY relname`);
    expect(options.rows).toEqual([
      { relname: 'conversation_names_trgm_idx', reloptions: ['gin_pending_list_limit=256'] },
      { relname: 'conversation_names_words_idx', reloptions: ['gin_pending_list_limit=256'] },
    ]);
    expect(await found(org, ['bich'])).toEqual([existing]);
  });

  it('a new conversation is searchable by its folded name and phone digits, in its own org only', async () => {
    const id = await conversation(org, 'Đỗ Văn Hùng', '0912 888 777');
    expect((await names(id)).search_text).toBe('do van hung 0912 888 777');
    expect(await found(org, ['hung', 'do'])).toEqual([id]);
    expect(await found(org, ['zzz'], '888')).toEqual([id]);
    expect(await found(otherOrg, ['hung'])).toEqual([]);
  });

  it('a renamed conversation is found by its new name; a message that keeps the name leaves the names row alone', async () => {
    const id = await conversation(org, 'Group abc123');
    await pool.query(`UPDATE conversations SET contact_name = 'Nhóm Khách Sỉ' WHERE id = $1`, [id]);
    expect(await found(org, ['khach', 'si'])).toEqual([id]);
    expect(await found(org, ['abc123'])).toEqual([]);

    const version = (await names(id)).version;
    // What the inbound batch does for each message: counters, last message, and the name set to itself.
    await pool.query(
      `UPDATE conversations SET message_count = message_count + 1, last_message_at = now(), contact_name = contact_name WHERE id = $1`,
      [id],
    );
    expect((await names(id)).version).toBe(version);
    await pool.query(`UPDATE conversations SET contact_phone = '0909 111 222' WHERE id = $1`, [id]);
    expect((await names(id)).version).not.toBe(version);
    expect(await found(org, ['zzz'], '111')).toEqual([id]);
  });

  it('updated_at moves on a real change only, as before the migration', async () => {
    const id = await conversation(org, 'Lê An');
    await pool.query(`UPDATE conversations SET updated_at = now() - interval '1 day' WHERE id = $1`, [id]);
    const old = await updatedAt(id);
    expect(Date.now() - old.getTime()).toBeGreaterThan(23 * 3_600_000);
    await pool.query(`UPDATE conversations SET status = status, contact_name = contact_name WHERE id = $1`, [id]);
    expect(await updatedAt(id)).toEqual(old);
    await pool.query(`UPDATE conversations SET unread_count = unread_count + 1 WHERE id = $1`, [id]);
    expect((await updatedAt(id)).getTime()).toBeGreaterThan(old.getTime());
  });

  it('deleting a conversation deletes its names row', async () => {
    const id = await conversation(org, 'Phạm Minh');
    await pool.query('DELETE FROM conversations WHERE id = $1', [id]);
    expect(await names(id)).toBeUndefined();
  });
});
