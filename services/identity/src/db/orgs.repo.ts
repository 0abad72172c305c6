import { Queryable } from '@crm/db';

export async function countOrganizations(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*) AS n FROM organizations');
  return rows[0].n;
}

export async function insertOrganization(db: Queryable, id: string, name: string): Promise<void> {
  await db.query('INSERT INTO organizations (id, name) VALUES ($1, $2)', [id, name]);
}

/** Serialises first-run setup: two concurrent setups must not both see "no organization". */
export async function lockSetup(db: Queryable): Promise<void> {
  await db.query('SELECT pg_advisory_xact_lock(5317)');
}

export async function organizationName(db: Queryable, id: string): Promise<string | undefined> {
  const { rows } = await db.query<{ name: string }>('SELECT name FROM organizations WHERE id = $1', [id]);
  return rows[0]?.name;
}
