import * as testing from '@crm/testing';
import { startStack } from './stack';
import { connectPatiently } from './patient-client';

// startStack that fails half-way (here crm's config is refused after identity is already serving) removes what it
// had started: no server left listening, no database left behind. Otherwise a test file whose beforeAll failed would
// leave services running in its jest worker, their timers failing in a loop against the torn-down environment.
describe('startStack: a start that fails half-way', () => {
  const listeners = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;

  async function existing(names: string[]): Promise<string[]> {
    const c = await connectPatiently(testing.infra.databaseUrl);
    try {
      return (await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname = ANY($1)', [names])).rows.map((r) => r.datname);
    } finally {
      await c.end();
    }
  }

  it('rejects with the cause and leaves no server running and no database behind', async () => {
    const before = listeners();
    // The databases this stack makes, by name (other test files make and drop theirs meanwhile).
    const made: string[] = [];
    const create = testing.createMigratedDatabase;
    const spy = jest.spyOn(testing, 'createMigratedDatabase').mockImplementation(async (...args) => {
      const db = await create(...args);
      made.push(new URL(db.url).pathname.slice(1));
      return db;
    });
    await expect(startStack({ services: ['crm'], serviceEnv: { crm: { DATABASE_POOL_SIZE: 'not a number' } } })).rejects.toThrow(
      /DATABASE_POOL_SIZE/,
    );
    // identity had started (gRPC and metrics listeners) before crm's config failed: both are closed again.
    expect(listeners()).toBe(before);
    spy.mockRestore();
    // Its database and crm's were made, and are dropped.
    expect(made).toHaveLength(2);
    expect(await existing(made)).toEqual([]);
  });
});
