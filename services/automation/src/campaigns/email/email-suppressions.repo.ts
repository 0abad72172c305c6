import { iso, offsetOf, PageRequest, pagination, Queryable } from '@crm/db';

export interface SuppressionRow {
  org_id: string;
  email: string;
  reason: string;
  campaign_id: string | null;
  created_at: Date;
}

const toSuppression = (r: SuppressionRow) => ({ email: r.email, reason: r.reason, campaignId: r.campaign_id ?? '', createdAt: iso(r.created_at) });

/** Addresses are compared lower-case: `Lan@Example.test` and `lan@example.test` are one mailbox here. */
export const normaliseEmail = (email: string) => email.trim().toLowerCase();

/** Suppress an address; one already suppressed keeps its first reason and time. */
export async function suppress(db: Queryable, orgId: string, email: string, reason: string, campaignId: string | null): Promise<void> {
  await db.query(
    `INSERT INTO email_suppressions (org_id, email, reason, campaign_id) VALUES ($1, $2, $3, $4) ON CONFLICT (org_id, email) DO NOTHING`,
    [orgId, normaliseEmail(email), reason, campaignId],
  );
}

export async function isSuppressed(db: Queryable, orgId: string, email: string): Promise<boolean> {
  const { rows } = await db.query({
    name: 'automation_email_suppressed',
    text: 'SELECT 1 FROM email_suppressions WHERE org_id = $1 AND email = $2',
    values: [orgId, normaliseEmail(email)],
  });
  return rows.length > 0;
}

export async function listSuppressions(db: Queryable, orgId: string, page: PageRequest) {
  const [list, count] = await Promise.all([
    db.query<SuppressionRow>('SELECT * FROM email_suppressions WHERE org_id = $1 ORDER BY created_at DESC, email LIMIT $2 OFFSET $3', [
      orgId,
      page.limit,
      offsetOf(page),
    ]),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM email_suppressions WHERE org_id = $1', [orgId]),
  ]);
  return { data: list.rows.map(toSuppression), pagination: pagination(page, count.rows[0].n) };
}

export async function unsuppress(db: Queryable, orgId: string, email: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM email_suppressions WHERE org_id = $1 AND email = $2', [orgId, normaliseEmail(email)]);
  return rowCount === 1;
}
