import { randomUUID } from 'node:crypto';
import { infra } from '@crm/testing';
import type { Client } from 'pg';
import { connectPatiently } from './patient-client';
import { activityNow } from './server-activity';

describe('activityNow', () => {
  let watcher: Client;
  let sleeper: Client;
  let observer: Client;
  beforeAll(async () => {
    [watcher, sleeper, observer] = await Promise.all([1, 2, 3].map(() => connectPatiently(infra.databaseUrl)));
  });
  afterAll(async () => {
    await Promise.all([watcher, sleeper, observer].map((c) => c.end()));
  });

  it('sees a statement started after the transaction first read pg_stat_activity, where a plain read keeps that first copy', async () => {
    const tag = `activity-${randomUUID()}`;
    const sql = `SELECT pid FROM pg_stat_activity WHERE query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()`;
    await watcher.query('BEGIN');
    try {
      expect((await watcher.query(sql, [tag])).rows).toEqual([]);
      const sleeping = sleeper.query(`SELECT pg_sleep(2), '${tag}'`);
      try {
        // Running, as a session outside any transaction sees.
        const seenOutside = async () => (await observer.query(sql, [tag])).rows.length === 1;
        for (let i = 0; i < 250 && !(await seenOutside()); i++) await new Promise((r) => setTimeout(r, 20));
        expect(await seenOutside()).toBe(true);
        expect((await watcher.query(sql, [tag])).rows).toEqual([]);
        expect(await activityNow(watcher, sql, [tag])).toHaveLength(1);
      } finally {
        await sleeping;
      }
    } finally {
      await watcher.query('ROLLBACK');
    }
  });
});
