import { Client } from 'pg';
import { infra } from '@crm/testing';
import { startStack } from './stack';

// startStack that fails half-way (here crm's config is refused after identity is already serving) removes what it
// had started: no server left listening, no database left behind. Otherwise a test file whose beforeAll failed would
// leave services running in its jest worker, their timers failing in a loop against the torn-down environment.
describe('startStack: a start that fails half-way', () => {
  const listeners = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;

  async function databasesOf(pattern: string): Promise<string[]> {
    const c = new Client({ connectionString: infra.databaseUrl });
    await c.connect();
    try {
      return (await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [pattern])).rows.map((r) => r.datname);
    } finally {
      await c.end();
    }
  }

  it('rejects with the cause and leaves no server running and no database behind', async () => {
    const before = listeners();
    const identityBefore = new Set(await databasesOf('t\\_identity\\_%'));
    await expect(startStack({ services: ['crm'], serviceEnv: { crm: { DB_POOL_SIZE: 'not a number' } } })).rejects.toThrow(/DB_POOL_SIZE/);
    // identity had started (gRPC and metrics listeners) before crm's config failed: both are closed again.
    expect(listeners()).toBe(before);
    // Its database and crm's were dropped (other test files' databases may come and go meanwhile: only new ones count).
    const left = (await databasesOf('t\\_identity\\_%')).filter((d) => !identityBefore.has(d));
    expect(left).toEqual([]);
  });
});
