import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Client } from 'pg';
import { migrate, Pool } from '@crm/db';
import { createTestDatabase, eventually, TestDatabase, testPool } from '@crm/testing';
import { PHONE_CHECK_CHANNEL } from '../src/contacts/db/phone-check.repo';

// The phone check's wake-up (migrations 012, 017), against a real PostgreSQL: contacts that give the check something
// to do notify its channel; a contact created without a phone (or with its chat-network identity) does not.
describe('phone-check wake-up', () => {
  let db: TestDatabase;
  let pool: Pool;
  let listener: Client;
  const heard: string[] = [];
  const orgId = randomUUID();

  beforeAll(async () => {
    db = await createTestDatabase('crm_phone_wake');
    pool = testPool(db.url, 2);
    await migrate(pool, path.join(__dirname, '..', 'migrations'));
    listener = new Client({ connectionString: db.url });
    await listener.connect();
    listener.on('notification', (n) => heard.push(n.channel));
    await listener.query(`LISTEN ${PHONE_CHECK_CHANNEL}`);
    await listener.query('LISTEN marker');
  });
  afterAll(async () => {
    await listener.end();
    await pool.end();
    await db.drop();
  });

  /** Notifications heard on the channel by the time a marker sent after `write` arrives (delivery is in commit order). */
  async function heardDuring(write: () => Promise<unknown>): Promise<number> {
    heard.length = 0;
    await write();
    await pool.query(`SELECT pg_notify('marker', '')`);
    await eventually(async () => heard.includes('marker'), 5_000, 5);
    return heard.filter((c) => c === PHONE_CHECK_CHANNEL).length;
  }
  const insert = (name: string, phone: string, uid: string | null = null) =>
    pool.query(`INSERT INTO contacts (id, org_id, name, phone, chatnet_uid) VALUES ($1, $2, $3, $4, $5) RETURNING id`, [
      randomUUID(),
      orgId,
      name,
      phone,
      uid,
    ]);

  it('an insert without a phone, or of a contact with its chat-network identity, wakes nothing', async () => {
    expect(await heardDuring(() => insert('no phone', ''))).toBe(0);
    expect(await heardDuring(() => insert('known on the network', '+84900000001', 'uid-1'))).toBe(0);
  });

  it('an insert with a phone to check wakes the check once per statement', async () => {
    expect(await heardDuring(() => insert('phone', '+84900000002'))).toBe(1);
    const many = () =>
      pool.query(
        `INSERT INTO contacts (id, org_id, name, phone) SELECT gen_random_uuid(), $1, 'c' || g, CASE WHEN g = 2 THEN '+8490000001' || g ELSE '' END
           FROM generate_series(1, 3) g`,
        [orgId],
      );
    expect(await heardDuring(many)).toBe(1);
  });

  it('a change of number wakes the check', async () => {
    const { rows } = await insert('later phone', '');
    expect(await heardDuring(() => pool.query(`UPDATE contacts SET phone = '+84900000099' WHERE id = $1`, [rows[0].id]))).toBe(1);
  });
});
