import { iso, isoOrUndefined, offsetOf, PageRequest, pagination, Queryable } from '@crm/db';
import type { Member } from '../lists';
import type { Outcome } from './campaigns.repo';

export interface RecipientRow {
  campaign_id: string;
  contact_id: string;
  /** Set once a contact merge moved the row to another contact: the id its send key and email links were made with. */
  original_contact_id: string | null;
  org_id: string;
  name: string;
  phone: string;
  email: string;
  chatnet_uid: string;
  contact_status: string;
  tags: string[];
  assigned_user_id: string;
  status: 'pending' | Outcome;
  error: string;
  attempts: number;
  next_attempt_at: Date;
  conversation_id: string | null;
  chatnet_account_id: string | null;
  message_id: string | null;
  sent_at: Date | null;
  replied_at: Date | null;
  seen_at: Date | null;
  updated_at: Date;
}

/** The contact id a row's send key (clientMessageId) and email links are made with: stable across contact merges. */
export const sendKeyContactOf = (r: Pick<RecipientRow, 'contact_id' | 'original_contact_id'>) => r.original_contact_id ?? r.contact_id;

/** The Recipient message; in a cancelled campaign, a recipient never reached shows as cancelled. */
export function toRecipient(r: RecipientRow, campaignStatus: string) {
  return {
    contactId: r.contact_id,
    name: r.name,
    phone: r.phone,
    email: r.email,
    status: r.status === 'pending' && campaignStatus === 'cancelled' ? 'cancelled' : r.status,
    error: r.error,
    attempts: r.attempts,
    conversationId: r.conversation_id ?? '',
    messageId: r.message_id ?? '',
    sentAt: isoOrUndefined(r.sent_at),
    repliedAt: isoOrUndefined(r.replied_at),
    seenAt: isoOrUndefined(r.seen_at),
    nextAttemptAt:
      r.status === 'pending' && campaignStatus !== 'cancelled' && r.next_attempt_at.getTime() > Date.now() ? iso(r.next_attempt_at) : undefined,
    updatedAt: iso(r.updated_at),
  };
}

/** Add a page of members; a member already there (a repeated page) is left as it is. */
export async function insertMembers(db: Queryable, orgId: string, campaignId: string, members: Member[]): Promise<void> {
  if (members.length === 0) return;
  const cols = 10;
  const values: unknown[] = [];
  const rows: string[] = [];
  members.forEach((m, i) => {
    const b = i * cols;
    rows.push(`(${Array.from({ length: cols }, (_, k) => `$${b + k + 1}`).join(', ')})`);
    values.push(
      campaignId,
      m.id,
      orgId,
      m.name ?? '',
      m.phone ?? '',
      m.email ?? '',
      m.chatnetUid ?? '',
      m.status ?? '',
      m.tags ?? [],
      m.assignedUserId ?? '',
    );
  });
  await db.query(
    `INSERT INTO campaign_recipients (campaign_id, contact_id, org_id, name, phone, email, chatnet_uid, contact_status, tags, assigned_user_id)
     VALUES ${rows.join(', ')} ON CONFLICT (campaign_id, contact_id) DO NOTHING`,
    values,
  );
}

export async function countRecipients(db: Queryable, campaignId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*) AS n FROM campaign_recipients WHERE campaign_id = $1', [campaignId]);
  return rows[0].n;
}

const DUE = {
  name: 'automation_due_recipients',
  text: `SELECT * FROM campaign_recipients WHERE campaign_id = $1 AND status = 'pending' AND next_attempt_at <= now()
         ORDER BY next_attempt_at, contact_id LIMIT $2`,
};

/** The next recipients to send to, in list order (deferred ones when their time comes). */
export async function due(db: Queryable, campaignId: string, limit: number): Promise<RecipientRow[]> {
  const { rows } = await db.query<RecipientRow>({ ...DUE, values: [campaignId, limit] });
  return rows;
}

/** When the earliest deferred recipient falls due; undefined when nobody is pending. */
export async function nextPendingAt(db: Queryable, campaignId: string): Promise<Date | undefined> {
  const { rows } = await db.query<{ at: Date | null }>(
    `SELECT min(next_attempt_at) AS at FROM campaign_recipients WHERE campaign_id = $1 AND status = 'pending'`,
    [campaignId],
  );
  return rows[0]?.at ?? undefined;
}

/** The conversation (and its account) a recipient is sent into, fixed before the first attempt. */
export async function setTarget(
  db: Queryable,
  campaignId: string,
  contactId: string,
  conversationId: string,
  accountId: string | null,
): Promise<void> {
  await db.query(
    `UPDATE campaign_recipients SET conversation_id = $3, chatnet_account_id = $4, updated_at = now()
     WHERE campaign_id = $1 AND contact_id = $2 AND status = 'pending'`,
    [campaignId, contactId, conversationId, accountId],
  );
}

/** setTarget for many recipients of a campaign in one statement (a batch whose conversations were looked up at once). */
export async function setTargets(
  db: Queryable,
  campaignId: string,
  targets: Array<{ contactId: string; conversationId: string; accountId: string | null }>,
): Promise<void> {
  if (targets.length === 0) return;
  await db.query(
    `UPDATE campaign_recipients r SET conversation_id = t.conversation_id, chatnet_account_id = t.account_id, updated_at = now()
     FROM unnest($2::uuid[], $3::uuid[], $4::uuid[]) AS t(contact_id, conversation_id, account_id)
     WHERE r.campaign_id = $1 AND r.contact_id = t.contact_id AND r.status = 'pending'`,
    [campaignId, targets.map((t) => t.contactId), targets.map((t) => t.conversationId), targets.map((t) => t.accountId)],
  );
}

/** Try again later: counted as an attempt (a failure) or not (held back by a rate limit). */
export async function defer(db: Queryable, campaignId: string, contactId: string, at: Date, error: string, countAttempt: boolean): Promise<void> {
  await db.query(
    `UPDATE campaign_recipients SET next_attempt_at = $3, error = $4, attempts = attempts + $5::int, updated_at = now()
     WHERE campaign_id = $1 AND contact_id = $2 AND status = 'pending'`,
    [campaignId, contactId, at, error, countAttempt ? 1 : 0],
  );
}

export async function listRecipients(db: Queryable, campaignId: string, campaignStatus: string, page: PageRequest, status?: string) {
  const args: unknown[] = [campaignId];
  let cond = 'campaign_id = $1';
  // Recipients never reached are 'pending' rows; they read as cancelled once the campaign is.
  const cancelledCampaign = campaignStatus === 'cancelled';
  if (status === 'cancelled') cond += cancelledCampaign ? ` AND status = 'pending'` : ' AND false';
  else if (status === 'pending' && cancelledCampaign) cond += ' AND false';
  else if (status) cond += ` AND status = $${args.push(status)}`;
  const [list, count] = await Promise.all([
    db.query<RecipientRow>(
      `SELECT * FROM campaign_recipients WHERE ${cond} ORDER BY contact_id LIMIT $${args.length + 1} OFFSET $${args.length + 2}`,
      [...args, page.limit, offsetOf(page)],
    ),
    db.query<{ n: number }>(`SELECT count(*) AS n FROM campaign_recipients WHERE ${cond}`, args),
  ]);
  return { data: list.rows.map((r) => toRecipient(r, campaignStatus)), pagination: pagination(page, count.rows[0].n) };
}

// ---------------------------------------------------------------------------------------------------
// Account holds (429 Retry-After, account not connected).

/** The org's accounts that campaigns leave alone for now, and until when. */
export async function activeHolds(db: Queryable, orgId: string): Promise<Map<string, Date>> {
  const { rows } = await db.query<{ account_id: string; until: Date }>(
    'SELECT account_id, until FROM campaign_account_holds WHERE org_id = $1 AND until > now()',
    [orgId],
  );
  return new Map(rows.map((r) => [r.account_id, r.until]));
}

export async function hold(db: Queryable, orgId: string, accountId: string, until: Date, reason: string): Promise<void> {
  await db.query(
    `INSERT INTO campaign_account_holds (org_id, account_id, until, reason) VALUES ($1, $2, $3, $4)
     ON CONFLICT (org_id, account_id) DO UPDATE SET until = GREATEST(campaign_account_holds.until, EXCLUDED.until), reason = EXCLUDED.reason`,
    [orgId, accountId, until, reason],
  );
}

// ---------------------------------------------------------------------------------------------------
// Replies.

/** A contact's message at a time: what may make them a campaign's replying recipient. */
export interface ContactReply {
  orgId: string;
  contactId: string;
  at: Date;
}

/**
 * The recipients who wrote back within `windowHours` after their campaign message are marked replied, for a whole batch
 * of messages in one statement; returns how many per campaign. A recipient is marked once (replied_at is set once),
 * at the earliest of the batch's messages that falls in its window.
 */
export async function markReplied(db: Queryable, replies: ContactReply[], windowHours: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (replies.length === 0) return out;
  const { rows } = await db.query<{ campaign_id: string }>({
    name: 'campaign_recipients_mark_replied',
    text: `UPDATE campaign_recipients r SET replied_at = m.at, updated_at = now()
     FROM (
       SELECT c.campaign_id, c.contact_id, min(t.at) AS at
       FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[]) AS t(org_id, contact_id, at)
       JOIN campaign_recipients c ON c.org_id = t.org_id AND c.contact_id = t.contact_id
        AND c.status = 'sent' AND c.replied_at IS NULL
        AND c.sent_at <= t.at AND c.sent_at > t.at - $4 * interval '1 hour'
       GROUP BY c.campaign_id, c.contact_id
     ) m
     WHERE r.campaign_id = m.campaign_id AND r.contact_id = m.contact_id AND r.replied_at IS NULL
     RETURNING r.campaign_id`,
    values: [replies.map((r) => r.orgId), replies.map((r) => r.contactId), replies.map((r) => r.at), windowHours],
  });
  for (const r of rows) out.set(r.campaign_id, (out.get(r.campaign_id) ?? 0) + 1);
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Read receipts.

/** A message a read receipt names, in its org, with when it was seen. */
export interface SeenMessage {
  orgId: string;
  messageId: string;
  at: Date;
}

/**
 * The recipients who were sent these messages and had not been seen yet are seen now, in one statement for any
 * number of orgs and receipts (a message named twice is seen at its first receipt, as one receipt after another
 * would leave it); returns how many per campaign and which messages matched ("org|message"). A recipient is seen at
 * most once (seen_at is set once).
 */
export async function markSeen(db: Queryable, seen: SeenMessage[]) {
  const { rows } = await db.query<{ campaign_id: string; org_id: string; message_id: string }>({
    name: 'automation_campaign_seen',
    text: `UPDATE campaign_recipients r SET seen_at = s.at, updated_at = now()
     FROM (
       SELECT DISTINCT ON (org_id, message_id) org_id, message_id, at
       FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[]) WITH ORDINALITY AS s (org_id, message_id, at, i)
       ORDER BY org_id, message_id, i
     ) s
     WHERE r.org_id = s.org_id AND r.message_id IS NOT NULL AND r.message_id = s.message_id AND r.status = 'sent' AND r.seen_at IS NULL
     RETURNING r.campaign_id, r.org_id, r.message_id`,
    values: [seen.map((m) => m.orgId), seen.map((m) => m.messageId), seen.map((m) => m.at)],
  });
  const perCampaign = new Map<string, number>();
  for (const r of rows) perCampaign.set(r.campaign_id, (perCampaign.get(r.campaign_id) ?? 0) + 1);
  return { perCampaign, matched: new Set(rows.map((r) => `${r.org_id}|${r.message_id}`)) };
}

/** Which of these messages some recipient row records as its sent message. */
export async function recordedMessages(db: Queryable, orgId: string, messageIds: string[]): Promise<Set<string>> {
  if (messageIds.length === 0) return new Set();
  const { rows } = await db.query<{ message_id: string }>(
    'SELECT message_id FROM campaign_recipients WHERE org_id = $1 AND message_id = ANY($2::uuid[])',
    [orgId, messageIds],
  );
  return new Set(rows.map((r) => r.message_id));
}

/** A campaign send into this conversation that has no recorded outcome yet (in flight, or to be retried). */
export async function sendPendingInto(db: Queryable, orgId: string, conversationId: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM campaign_recipients WHERE org_id = $1 AND conversation_id = $2 AND status = 'pending' LIMIT 1`, [
    orgId,
    conversationId,
  ]);
  return rows.length > 0;
}

/** Holds that ran out long ago are removed now and then. */
export async function pruneHolds(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM campaign_account_holds WHERE until < now() - interval '1 day'`);
}
