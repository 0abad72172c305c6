import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

export interface OneConnectionRole {
  /** The server's URL as the test suite's admin (DATABASE_URL). */
  baseUrl: string;
  /** The same server as the role. */
  url: string;
  /** Connected between beforeAll and afterAll. */
  admin: Client;
}

/**
 * A login role the server lets hold one connection at a time (CONNECTION LIMIT 1), made in beforeAll and dropped in
 * afterAll: with its one connection held, the next is refused with 53300, as a full server refuses (max_connections).
 */
export function oneConnectionRole(label: string): OneConnectionRole {
  const baseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const role = `${label}_${randomBytes(4).toString('hex')}`;
  const url = Object.assign(new URL(baseUrl), { username: role, password: '' }).toString();
  const admin = new Client({ connectionString: baseUrl });
  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 1`);
  });
  afterAll(async () => {
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
    await admin.end();
  });
  return { baseUrl, url, admin };
}
