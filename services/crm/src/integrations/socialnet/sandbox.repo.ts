import type { Queryable } from '@crm/db';

/**
 * The sandbox network's own data (socialnet_sandbox_*): what the simulated network knows about pages,
 * forms and leads. Only the sandbox driver and its control API use these queries.
 */

export interface SandboxPageRow {
  id: string;
  name: string;
  followers: number;
  access_token: string;
  outage_after: number | null;
  form_count: number;
}

export interface SandboxFormRow {
  id: string;
  page_id: string;
  name: string;
  lead_count: number;
}

export interface SandboxLeadRow {
  seq: number;
  lead_id: string;
  form_id: string;
  data: { fullName?: string; phone?: string; email?: string; fields?: Record<string, string> };
  created_at: Date;
}

const PAGE_COLUMNS = `p.id, p.name, p.followers, p.access_token, p.outage_after,
  (SELECT count(*) FROM socialnet_sandbox_forms f WHERE f.page_id = p.id)::int AS form_count`;

export async function insertPage(
  db: Queryable,
  p: { id: string; orgId: string; name: string; followers: number; accessToken: string },
): Promise<SandboxPageRow> {
  await db.query({
    name: 'crm_sn_sandbox_page_insert',
    text: 'INSERT INTO socialnet_sandbox_pages (id, org_id, name, followers, access_token) VALUES ($1, $2, $3, $4, $5)',
    values: [p.id, p.orgId, p.name, p.followers, p.accessToken],
  });
  return (await findPage(db, p.orgId, p.id))!;
}

export async function pagesOf(db: Queryable, orgId: string): Promise<SandboxPageRow[]> {
  const { rows } = await db.query<SandboxPageRow>({
    name: 'crm_sn_sandbox_pages_of_org',
    text: `SELECT ${PAGE_COLUMNS} FROM socialnet_sandbox_pages p WHERE p.org_id = $1 ORDER BY p.created_at, p.id`,
    values: [orgId],
  });
  return rows;
}

export async function findPage(db: Queryable, orgId: string, id: string): Promise<SandboxPageRow | undefined> {
  const { rows } = await db.query<SandboxPageRow>({
    name: 'crm_sn_sandbox_page_by_id',
    text: `SELECT ${PAGE_COLUMNS} FROM socialnet_sandbox_pages p WHERE p.id = $1 AND p.org_id = $2`,
    values: [id, orgId],
  });
  return rows[0];
}

export async function setOutage(db: Queryable, orgId: string, id: string, afterLeads: number | null): Promise<boolean> {
  const res = await db.query({
    name: 'crm_sn_sandbox_page_outage',
    text: 'UPDATE socialnet_sandbox_pages SET outage_after = $3 WHERE id = $1 AND org_id = $2',
    values: [id, orgId, afterLeads],
  });
  return (res.rowCount ?? 0) > 0;
}

export async function replaceToken(db: Queryable, orgId: string, id: string, accessToken: string): Promise<boolean> {
  const res = await db.query({
    name: 'crm_sn_sandbox_page_token',
    text: 'UPDATE socialnet_sandbox_pages SET access_token = $3 WHERE id = $1 AND org_id = $2',
    values: [id, orgId, accessToken],
  });
  return (res.rowCount ?? 0) > 0;
}

const FORM_COLUMNS = `f.id, f.page_id, f.name,
  (SELECT count(*) FROM socialnet_sandbox_leads l WHERE l.form_id = f.id)::int AS lead_count`;

export async function insertForm(db: Queryable, f: { id: string; orgId: string; pageId: string; name: string }): Promise<SandboxFormRow> {
  await db.query({
    name: 'crm_sn_sandbox_form_insert',
    text: 'INSERT INTO socialnet_sandbox_forms (id, org_id, page_id, name) VALUES ($1, $2, $3, $4)',
    values: [f.id, f.orgId, f.pageId, f.name],
  });
  return (await findForm(db, f.orgId, f.id))!;
}

export async function formsOf(db: Queryable, orgId: string, pageId: string): Promise<SandboxFormRow[]> {
  const { rows } = await db.query<SandboxFormRow>({
    name: 'crm_sn_sandbox_forms_of_page',
    text: `SELECT ${FORM_COLUMNS} FROM socialnet_sandbox_forms f WHERE f.page_id = $1 AND f.org_id = $2 ORDER BY f.created_at, f.id`,
    values: [pageId, orgId],
  });
  return rows;
}

export async function findForm(db: Queryable, orgId: string, id: string): Promise<SandboxFormRow | undefined> {
  const { rows } = await db.query<SandboxFormRow>({
    name: 'crm_sn_sandbox_form_by_id',
    text: `SELECT ${FORM_COLUMNS} FROM socialnet_sandbox_forms f WHERE f.id = $1 AND f.org_id = $2`,
    values: [id, orgId],
  });
  return rows[0];
}

export interface NewSandboxLead {
  leadId: string;
  data: { fullName: string; phone: string; email: string; fields: Record<string, string> };
}

/** Adds the leads in order; ids the network already has are left alone. Returns the ids added. */
export async function insertLeads(db: Queryable, orgId: string, formId: string, leads: NewSandboxLead[]): Promise<string[]> {
  if (leads.length === 0) return [];
  const { rows } = await db.query<{ lead_id: string }>({
    name: 'crm_sn_sandbox_leads_insert',
    text: `INSERT INTO socialnet_sandbox_leads (org_id, form_id, lead_id, data)
           SELECT $1, $2, l.lead_id, l.data FROM unnest($3::text[], $4::jsonb[]) WITH ORDINALITY AS l(lead_id, data, n)
           ORDER BY l.n
           ON CONFLICT (org_id, lead_id) DO NOTHING RETURNING lead_id`,
    values: [orgId, formId, leads.map((l) => l.leadId), leads.map((l) => JSON.stringify(l.data))],
  });
  return rows.map((r) => r.lead_id);
}

/** A form's leads after `afterSeq` in the order the network received them. */
export async function leadsAfter(db: Queryable, orgId: string, formId: string, afterSeq: number, limit: number): Promise<SandboxLeadRow[]> {
  const { rows } = await db.query<SandboxLeadRow>({
    name: 'crm_sn_sandbox_leads_after',
    text: `SELECT seq, lead_id, form_id, data, created_at FROM socialnet_sandbox_leads
           WHERE form_id = $1 AND org_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
    values: [formId, orgId, afterSeq, limit],
  });
  return rows;
}

/** How many of the form's leads come at or before `seq` (how far a cursor has got, for the outage switch). */
export async function leadsUpTo(db: Queryable, orgId: string, formId: string, seq: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>({
    name: 'crm_sn_sandbox_leads_up_to',
    text: 'SELECT count(*)::int AS n FROM socialnet_sandbox_leads WHERE form_id = $1 AND org_id = $2 AND seq <= $3',
    values: [formId, orgId, seq],
  });
  return rows[0].n;
}
