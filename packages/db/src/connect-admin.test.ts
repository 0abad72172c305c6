import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { oneConnectionRole } from './test-support/one-connection-role';
import { connectAdmin } from './index';

// A one-off admin connection (creating or dropping a database: service start-up, the test harness's copies) waits
// for room on a full server instead of failing at once (CI: a stack's start failed on "too many clients already").
describe('connectAdmin', () => {
  const { baseUrl, url: asRole } = oneConnectionRole('connect_admin');

  it('waits while the only connection allowed is held, and connects once it is released', async () => {
    const holder = new Client({ connectionString: asRole });
    await holder.connect();
    const started = Date.now();
    const connecting = connectAdmin(asRole);
    // The first attempts are refused (53300) while the holder is connected.
    await new Promise((r) => setTimeout(r, 400));
    await holder.end();
    const client = await connecting;
    try {
      expect((await client.query('SELECT 1 AS n')).rows[0].n).toBe(1);
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    } finally {
      await client.end();
    }
  });

  it('gives up with the server’s refusal after its wait, and throws any other error at once', async () => {
    const holder = new Client({ connectionString: asRole });
    await holder.connect();
    try {
      await expect(connectAdmin(asRole, 300)).rejects.toMatchObject({ code: '53300' });
    } finally {
      await holder.end();
    }
    const started = Date.now();
    const noSuchDb = Object.assign(new URL(baseUrl), { pathname: `/no_such_db_${randomBytes(4).toString('hex')}` }).toString();
    await expect(connectAdmin(noSuchDb)).rejects.toMatchObject({ code: '3D000' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
