import { iso, isoOrUndefined, Queryable } from '@crm/db';

export type IntegrationStatus = 'connected' | 'disconnected' | 'auth_expired';

export interface IntegrationRow {
  id: string;
  org_id: string;
  type: string;
  name: string;
  status: IntegrationStatus;
  external_id: string;
  config: Record<string, unknown>;
  access_token_enc: string | null;
  last_sync: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, org_id, type, name, status, external_id, config, access_token_enc, last_sync, created_at, updated_at';

/** The Integration resource; the token never leaves the service. */
export function toIntegration(r: IntegrationRow) {
  return {
    id: r.id,
    type: r.type,
    name: r.name,
    status: r.status,
    configJson: JSON.stringify(r.config ?? {}),
    lastSync: isoOrUndefined(r.last_sync),
    createdAt: iso(r.created_at),
  };
}

export async function listIntegrations(db: Queryable, orgId: string): Promise<IntegrationRow[]> {
  const { rows } = await db.query<IntegrationRow>({
    name: 'crm_integrations_list',
    text: `SELECT ${COLUMNS} FROM integrations WHERE org_id = $1 ORDER BY created_at, id`,
    values: [orgId],
  });
  return rows;
}

export async function findIntegration(db: Queryable, orgId: string, id: string, lock = false): Promise<IntegrationRow | undefined> {
  const { rows } = await db.query<IntegrationRow>({
    name: lock ? 'crm_integration_by_id_lock' : 'crm_integration_by_id',
    text: `SELECT ${COLUMNS} FROM integrations WHERE id = $1 AND org_id = $2${lock ? ' FOR UPDATE' : ''}`,
    values: [id, orgId],
  });
  return rows[0];
}

export async function findByExternalId(
  db: Queryable,
  orgId: string,
  type: string,
  externalId: string,
  lock = false,
): Promise<IntegrationRow | undefined> {
  const { rows } = await db.query<IntegrationRow>({
    name: lock ? 'crm_integration_by_external_lock' : 'crm_integration_by_external',
    text: `SELECT ${COLUMNS} FROM integrations WHERE org_id = $1 AND type = $2 AND external_id = $3${lock ? ' FOR UPDATE' : ''}`,
    values: [orgId, type, externalId],
  });
  return rows[0];
}

/** External ids of the org's integrations of a type that are connected now. */
export async function connectedExternalIds(db: Queryable, orgId: string, type: string): Promise<Set<string>> {
  const { rows } = await db.query<{ external_id: string }>({
    name: 'crm_integrations_connected_ids',
    text: `SELECT external_id FROM integrations WHERE org_id = $1 AND type = $2 AND status = 'connected'`,
    values: [orgId, type],
  });
  return new Set(rows.map((r) => r.external_id));
}

/** Insert the integration row unless the org already has one for that page; true when inserted. */
export async function insertIfMissing(
  db: Queryable,
  i: { id: string; orgId: string; type: string; name: string; externalId: string; config: object },
): Promise<boolean> {
  const res = await db.query({
    name: 'crm_integration_insert',
    text: `INSERT INTO integrations (id, org_id, type, name, status, external_id, config)
           VALUES ($1, $2, $3, $4, 'disconnected', $5, $6::jsonb)
           ON CONFLICT (org_id, type, external_id) DO NOTHING`,
    values: [i.id, i.orgId, i.type, i.name, i.externalId, JSON.stringify(i.config)],
  });
  return (res.rowCount ?? 0) > 0;
}

export async function markConnected(
  db: Queryable,
  orgId: string,
  id: string,
  p: { name: string; config: object; tokenEnc: string },
): Promise<IntegrationRow> {
  const { rows } = await db.query<IntegrationRow>({
    name: 'crm_integration_connect',
    text: `UPDATE integrations SET status = 'connected', name = $3, config = $4::jsonb, access_token_enc = $5, updated_at = now()
           WHERE id = $1 AND org_id = $2 RETURNING ${COLUMNS}`,
    values: [id, orgId, p.name, JSON.stringify(p.config), p.tokenEnc],
  });
  return rows[0];
}

export async function markDisconnected(db: Queryable, orgId: string, id: string): Promise<boolean> {
  const res = await db.query({
    name: 'crm_integration_disconnect',
    text: `UPDATE integrations SET status = 'disconnected', access_token_enc = NULL, updated_at = now() WHERE id = $1 AND org_id = $2`,
    values: [id, orgId],
  });
  return (res.rowCount ?? 0) > 0;
}

/** The network refused the token: the page must be connected again. Only a connected integration moves. */
export async function markAuthExpired(db: Queryable, orgId: string, id: string): Promise<void> {
  await db.query({
    name: 'crm_integration_auth_expired',
    text: `UPDATE integrations SET status = 'auth_expired', updated_at = now() WHERE id = $1 AND org_id = $2 AND status = 'connected'`,
    values: [id, orgId],
  });
}

/** After a completed sync: lastSync and the form count seen by it. */
export async function recordSync(db: Queryable, orgId: string, id: string, formCount: number): Promise<void> {
  await db.query({
    name: 'crm_integration_synced',
    text: `UPDATE integrations SET last_sync = now(), config = config || jsonb_build_object('formCount', $3::int), updated_at = now()
           WHERE id = $1 AND org_id = $2`,
    values: [id, orgId, formCount],
  });
}
