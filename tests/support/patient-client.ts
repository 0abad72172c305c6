import { Client } from 'pg';

/** PostgreSQL's "too many clients already" (and a role's connection limit): the server is full for now. */
const TOO_MANY_CLIENTS = '53300';

/**
 * A test's own connection to a database, made when the shared server has room: the services wait for room
 * (@crm/db's PatientPool), and a test that checks their work beside a crowded server (its own stack under load, the
 * other jest worker's stack, `npm start`) must not fail on its own connection instead. Other errors are thrown at once.
 */
export async function connectPatiently(connectionString: string, waitMs = 30_000): Promise<Client> {
  const deadline = Date.now() + waitMs;
  for (let delay = 100; ; delay = Math.min(delay * 2, 2_000)) {
    const c = new Client({ connectionString });
    try {
      await c.connect();
      return c;
    } catch (err) {
      await c.end().catch(() => undefined);
      if ((err as { code?: string }).code !== TOO_MANY_CLIENTS || Date.now() + delay > deadline) throw err;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
