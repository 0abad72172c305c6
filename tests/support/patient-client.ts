import { connectAdmin } from '@crm/db';
import type { Client } from 'pg';

/**
 * A test's own connection to a database, made when the shared server has room: the services wait for room
 * (@crm/db's PatientPool), and a test that checks their work beside a crowded server (its own stack under load, the
 * other jest worker's stack, `npm start`) must not fail on its own connection instead. Other errors are thrown at once.
 * The waiting is @crm/db's connectAdmin, which the test harness's database copies use too.
 */
export function connectPatiently(connectionString: string, waitMs = 30_000): Promise<Client> {
  return connectAdmin(connectionString, waitMs);
}
