import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { prepareDatabase } from '@crm/db';
import { infra } from '@crm/testing';
import { connectPatiently } from '../support/patient-client';
import { postgresProxy, type PostgresProxy } from '../support/postgres-proxy';

// A service's start (prepareDatabase) through a proxy that records each session: the first start creates the missing
// database through the maintenance one and migrates it; every later start (a restart, another replica) makes one
// connection, to its own database, and none to the maintenance database.
describe('prepareDatabase', () => {
  const name = `t_prepare_${randomBytes(4).toString('hex')}`;
  let proxy: PostgresProxy;
  let dir: string;

  beforeAll(async () => {
    proxy = await postgresProxy(new URL(infra.databaseUrl));
    dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    await writeFile(path.join(dir, '001_first.sql'), 'CREATE TABLE first (id int)');
  });
  afterAll(async () => {
    await proxy?.close();
    await rm(dir, { recursive: true, force: true });
    const admin = await connectPatiently(infra.databaseUrl);
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  });

  it('creates a missing database, then later starts make one connection to it and none to the maintenance database', async () => {
    const url = proxy.url(Object.assign(new URL(infra.databaseUrl), { pathname: `/${name}` }).toString());
    expect(await prepareDatabase(url, dir)).toEqual(['001_first.sql']);
    // The attempt that found no database, the maintenance database's connection that created it, the migration's.
    expect(proxy.sessions.map((s) => s.database)).toEqual([name, 'postgres', name]);

    proxy.sessions.length = 0;
    await writeFile(path.join(dir, '002_second.sql'), 'CREATE TABLE second (id int)');
    expect(await prepareDatabase(url, dir)).toEqual(['002_second.sql']);
    expect(await prepareDatabase(url, dir)).toEqual([]);
    expect(proxy.sessions.map((s) => s.database)).toEqual([name, name]);
  });
});
