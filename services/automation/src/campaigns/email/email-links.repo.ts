import type { Queryable } from '@crm/db';

/**
 * The recipient a link token names, looked up by its ids alone (the token's MAC is checked against it). A link names
 * the contact the email was made for, which a contact merge may have replaced on the row since (original_contact_id).
 */
export interface LinkRecipient {
  org_id: string;
  email: string;
  type: string;
}

export async function recipientForLink(db: Queryable, campaignId: string, contactId: string): Promise<LinkRecipient | undefined> {
  const { rows } = await db.query<LinkRecipient>({
    name: 'automation_link_recipient',
    text: `SELECT r.org_id, r.email, c.type FROM campaign_recipients r JOIN campaigns c ON c.id = r.campaign_id
           WHERE r.campaign_id = $1 AND COALESCE(r.original_contact_id, r.contact_id) = $2`,
    values: [campaignId, contactId],
  });
  return rows[0];
}

/**
 * The first open of a sent email: the recipient's seen_at and the campaign's seen_count move together, once
 * (seen_at is set only while null), so openRate = seen_count / sent_count counts each recipient once.
 */
export async function markOpened(db: Queryable, orgId: string, campaignId: string, contactId: string): Promise<boolean> {
  const { rows } = await db.query<{ n: number }>(
    `WITH opened AS (
       UPDATE campaign_recipients SET seen_at = now(), updated_at = now()
       WHERE campaign_id = $2 AND COALESCE(original_contact_id, contact_id) = $3 AND org_id = $1 AND status = 'sent' AND seen_at IS NULL RETURNING 1)
     UPDATE campaigns SET seen_count = seen_count + (SELECT count(*) FROM opened)::int
     WHERE id = $2 AND org_id = $1 RETURNING (SELECT count(*) FROM opened)::int AS n`,
    [orgId, campaignId, contactId],
  );
  return (rows[0]?.n ?? 0) > 0;
}
