import { iso, isoOrUndefined, Queryable } from '@crm/db';

export type CampaignStatus = 'draft' | 'active' | 'paused' | 'completed' | 'cancelled';
export type Scalar = string | number | boolean;

export interface CampaignRow {
  id: string;
  org_id: string;
  name: string;
  description: string;
  type: string;
  list_id: string;
  template_id: string;
  content: string | null;
  /** Email campaigns: the subject line template; '' for broadcasts. */
  subject: string;
  variables: Record<string, Scalar>;
  schedule: Date | null;
  status: CampaignStatus;
  contact_count: number;
  snapshot_done: boolean;
  snapshot_after: string;
  sent_count: number;
  failed_count: number;
  skipped_count: number;
  replied_count: number;
  seen_count: number;
  next_send_at: Date;
  backoff_level: number;
  lease_owner: string | null;
  lease_until: Date | null;
  last_error: string;
  created_by: string | null;
  /** Broadcasts: the account conversations are started from for recipients without one (null: chosen per contact). */
  chatnet_account_id: string | null;
  created_at: Date;
  updated_at: Date;
  activated_at: Date | null;
  completed_at: Date | null;
  cancelled_at: Date | null;
}

/** A share of the sent messages, 0..1 with 4 decimals; 0 before anything was sent. */
function shareOfSent(n: number, sent: number): number {
  return sent > 0 ? Math.round((n / sent) * 10_000) / 10_000 : 0;
}

/** openRate: the share of sent campaign messages the chat network reported read (read receipts). */
export function openRateOf(r: Pick<CampaignRow, 'sent_count' | 'seen_count'>): number {
  return shareOfSent(r.seen_count, r.sent_count);
}

/** replyRate (extension): the share of sent recipients who wrote back within CAMPAIGN_REPLY_WINDOW_HOURS. */
export function replyRateOf(r: Pick<CampaignRow, 'sent_count' | 'replied_count'>): number {
  return shareOfSent(r.replied_count, r.sent_count);
}

export function countsOf(r: CampaignRow) {
  const total = r.contact_count;
  const done = r.sent_count + r.failed_count + r.skipped_count;
  const open = Math.max(0, total - done);
  // A cancelled campaign sends nobody else: its open recipients are cancelled, not pending.
  const cancelled = r.status === 'cancelled' ? open : 0;
  return {
    total,
    sent: r.sent_count,
    failed: r.failed_count,
    skipped: r.skipped_count,
    pending: open - cancelled,
    cancelled,
    replied: r.replied_count,
    seen: r.seen_count,
  };
}

/** The Campaign message of the contract. */
export function toCampaign(r: CampaignRow) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    type: r.type,
    listId: r.list_id,
    templateId: r.template_id,
    subject: r.subject,
    chatnetAccountId: r.chatnet_account_id ?? undefined,
    schedule: isoOrUndefined(r.schedule),
    variablesJson: JSON.stringify(r.variables ?? {}),
    status: r.status,
    contactCount: r.contact_count,
    sentCount: r.sent_count,
    openRate: openRateOf(r),
    replyRate: replyRateOf(r),
    counts: countsOf(r),
    recipientsReady: r.status !== 'draft' && r.snapshot_done,
    lastError: r.last_error,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    activatedAt: isoOrUndefined(r.activated_at),
    completedAt: isoOrUndefined(r.completed_at),
    cancelledAt: isoOrUndefined(r.cancelled_at),
  };
}

export async function listCampaigns(db: Queryable, orgId: string, status?: string): Promise<CampaignRow[]> {
  const { rows } = status
    ? await db.query<CampaignRow>('SELECT * FROM campaigns WHERE org_id = $1 AND status = $2 ORDER BY created_at DESC, id DESC', [orgId, status])
    : await db.query<CampaignRow>('SELECT * FROM campaigns WHERE org_id = $1 ORDER BY created_at DESC, id DESC', [orgId]);
  return rows;
}

const GET = { name: 'automation_get_campaign', text: 'SELECT * FROM campaigns WHERE org_id = $1 AND id = $2' };

export async function getCampaign(db: Queryable, orgId: string, id: string): Promise<CampaignRow | undefined> {
  const { rows } = await db.query<CampaignRow>({ ...GET, values: [orgId, id] });
  return rows[0];
}

export async function lockCampaign(db: Queryable, orgId: string, id: string): Promise<CampaignRow | undefined> {
  const { rows } = await db.query<CampaignRow>('SELECT * FROM campaigns WHERE org_id = $1 AND id = $2 FOR UPDATE', [orgId, id]);
  return rows[0];
}

export interface NewCampaign {
  id: string;
  orgId: string;
  name: string;
  description: string;
  type: string;
  listId: string;
  templateId: string;
  subject: string;
  variables: Record<string, Scalar>;
  schedule: Date | null;
  contactCount: number;
  createdBy: string | null;
  chatnetAccountId: string | null;
}

export async function insertCampaign(db: Queryable, c: NewCampaign): Promise<CampaignRow> {
  const { rows } = await db.query<CampaignRow>(
    `INSERT INTO campaigns (id, org_id, name, description, type, list_id, template_id, variables, schedule, contact_count, created_by, subject, chatnet_account_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING *`,
    [
      c.id,
      c.orgId,
      c.name,
      c.description,
      c.type,
      c.listId,
      c.templateId,
      JSON.stringify(c.variables),
      c.schedule,
      c.contactCount,
      c.createdBy,
      c.subject,
      c.chatnetAccountId,
    ],
  );
  return rows[0];
}

export interface CampaignPatch {
  name?: string;
  description?: string;
  type?: string;
  subject?: string;
  listId?: string;
  templateId?: string;
  variables?: Record<string, Scalar>;
  /** null clears the schedule. */
  schedule?: Date | null;
  contactCount?: number;
  /** null clears the account. */
  chatnetAccountId?: string | null;
}

/** Only a draft is edited; returns undefined when the campaign is not (or no longer) a draft. */
export async function updateDraft(db: Queryable, orgId: string, id: string, p: CampaignPatch): Promise<CampaignRow | undefined> {
  const { rows } = await db.query<CampaignRow>(
    `UPDATE campaigns SET name = COALESCE($3, name), description = COALESCE($4, description), list_id = COALESCE($5, list_id),
       template_id = COALESCE($6, template_id), variables = COALESCE($7::jsonb, variables),
       schedule = CASE WHEN $8 THEN $9::timestamptz ELSE schedule END, contact_count = COALESCE($10, contact_count),
       type = COALESCE($11, type), subject = COALESCE($12, subject),
       chatnet_account_id = CASE WHEN $13 THEN $14::uuid ELSE chatnet_account_id END, updated_at = now()
     WHERE org_id = $1 AND id = $2 AND status = 'draft' RETURNING *`,
    [
      orgId,
      id,
      p.name ?? null,
      p.description ?? null,
      p.listId ?? null,
      p.templateId ?? null,
      p.variables ? JSON.stringify(p.variables) : null,
      p.schedule !== undefined,
      p.schedule ?? null,
      p.contactCount ?? null,
      p.type ?? null,
      p.subject ?? null,
      p.chatnetAccountId !== undefined,
      p.chatnetAccountId ?? null,
    ],
  );
  return rows[0];
}

/** The list's live count for a draft, refreshed when someone looks. */
export async function refreshDraftCount(db: Queryable, orgId: string, id: string, count: number): Promise<void> {
  await db.query(`UPDATE campaigns SET contact_count = $3 WHERE org_id = $1 AND id = $2 AND status = 'draft' AND contact_count <> $3`, [
    orgId,
    id,
    count,
  ]);
}

export async function setSchedule(db: Queryable, orgId: string, id: string, schedule: Date): Promise<CampaignRow | undefined> {
  const { rows } = await db.query<CampaignRow>(
    `UPDATE campaigns SET schedule = $3, updated_at = now() WHERE org_id = $1 AND id = $2 AND status IN ('draft', 'active', 'paused') RETURNING *`,
    [orgId, id, schedule],
  );
  return rows[0];
}

/** draft → active: the template text is fixed and the list snapshot starts (done by the sender). */
export async function activateDraft(db: Queryable, orgId: string, id: string, content: string, listCount: number): Promise<CampaignRow | undefined> {
  const { rows } = await db.query<CampaignRow>(
    `UPDATE campaigns SET status = 'active', content = $3, contact_count = $4, snapshot_done = false, snapshot_after = '',
       next_send_at = now(), backoff_level = 0, last_error = '', activated_at = now(), updated_at = now()
     WHERE org_id = $1 AND id = $2 AND status = 'draft' RETURNING *`,
    [orgId, id, content, listCount],
  );
  return rows[0];
}

/** paused → active. */
export async function resume(db: Queryable, orgId: string, id: string): Promise<CampaignRow | undefined> {
  const { rows } = await db.query<CampaignRow>(
    `UPDATE campaigns SET status = 'active', next_send_at = now(), backoff_level = 0, last_error = '', updated_at = now()
     WHERE org_id = $1 AND id = $2 AND status = 'paused' RETURNING *`,
    [orgId, id],
  );
  return rows[0];
}

export async function pause(db: Queryable, orgId: string, id: string, error = ''): Promise<CampaignRow | undefined> {
  const { rows } = await db.query<CampaignRow>(
    `UPDATE campaigns SET status = 'paused', last_error = $3, updated_at = now() WHERE org_id = $1 AND id = $2 AND status = 'active' RETURNING *`,
    [orgId, id, error],
  );
  return rows[0];
}

export async function cancel(db: Queryable, orgId: string, id: string): Promise<CampaignRow | undefined> {
  const { rows } = await db.query<CampaignRow>(
    `UPDATE campaigns SET status = 'cancelled', cancelled_at = now(), lease_owner = NULL, lease_until = NULL, updated_at = now()
     WHERE org_id = $1 AND id = $2 AND status IN ('draft', 'active', 'paused') RETURNING *`,
    [orgId, id],
  );
  return rows[0];
}

/** Names of draft campaigns that would send this template (a template they use cannot be deleted). */
export async function draftsUsingTemplate(db: Queryable, orgId: string, templateId: string): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT name FROM campaigns WHERE org_id = $1 AND template_id = $2 AND status = 'draft' ORDER BY created_at LIMIT 5`,
    [orgId, templateId],
  );
  return rows.map((r) => r.name);
}

// ---------------------------------------------------------------------------------------------------
// The sender's side: leases, pacing, snapshot progress, completion.

/**
 * Due: active campaigns nobody holds whose next turn has come (pacing, backoff) and whose schedule has
 * come, or whose snapshot is unfinished (taken at activation, whatever the schedule). The lease makes one instance at a time the sender of a campaign, so its pacing holds.
 */
const CLAIM = {
  name: 'automation_claim_campaigns',
  text: `UPDATE campaigns c SET lease_owner = $1, lease_until = now() + $3 * interval '1 millisecond'
         WHERE c.id IN (
           SELECT id FROM campaigns
           WHERE status = 'active' AND (lease_until IS NULL OR lease_until < now())
             AND next_send_at <= now() AND (NOT snapshot_done OR schedule IS NULL OR schedule <= now())
           ORDER BY next_send_at, id LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING c.*`,
};

export async function claimDue(db: Queryable, owner: string, limit: number, leaseMs: number): Promise<CampaignRow[]> {
  const { rows } = await db.query<CampaignRow>({ ...CLAIM, values: [owner, limit, leaseMs] });
  return rows;
}

/**
 * Still ours, still active, schedule reached? Renews the lease in the same statement. A pause, a cancel,
 * a new schedule in the future or a lost lease all answer undefined and the sender lets go.
 */
const KEEP = {
  name: 'automation_keep_campaign',
  text: `UPDATE campaigns SET lease_until = now() + $3 * interval '1 millisecond'
         WHERE id = $1 AND lease_owner = $2 AND status = 'active' AND (schedule IS NULL OR schedule <= now())
         RETURNING *`,
};

export async function keep(db: Queryable, id: string, owner: string, leaseMs: number): Promise<CampaignRow | undefined> {
  const { rows } = await db.query<CampaignRow>({ ...KEEP, values: [id, owner, leaseMs] });
  return rows[0];
}

/** Let go of a campaign, saying when it wants to send next (pacing, deferred recipients, backoff). */
export async function release(db: Queryable, id: string, owner: string, nextSendAt?: Date): Promise<void> {
  await db.query(
    `UPDATE campaigns SET lease_owner = NULL, lease_until = NULL, next_send_at = COALESCE($3, next_send_at) WHERE id = $1 AND lease_owner = $2`,
    [id, owner, nextSendAt ?? null],
  );
}

export async function releaseAll(db: Queryable, owner: string): Promise<void> {
  await db.query(`UPDATE campaigns SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1`, [owner]);
}

/** Record one snapshot page: the cursor moves only from where this page started (a stale worker changes nothing). */
export async function snapshotProgress(db: Queryable, id: string, from: string, next: string, done: boolean, count: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE campaigns SET snapshot_after = $3, snapshot_done = $4, contact_count = CASE WHEN $4 THEN $5 ELSE GREATEST(contact_count, $5) END,
       backoff_level = 0, last_error = '', updated_at = now()
     WHERE id = $1 AND snapshot_after = $2 AND NOT snapshot_done`,
    [id, from, next, done, count],
  );
  return rowCount === 1;
}

export type Outcome = 'sent' | 'failed' | 'skipped';

/**
 * One recipient's outcome, its count on the campaign, the pace and the lease, in one statement (so one
 * round trip and atomic). The recipient moves only from pending, so it is counted once even if two
 * senders ever raced on it. Answers the campaign's state, so the sender notices a pause or a cancel
 * right after the send in hand.
 */
const RECORD = {
  name: 'automation_record_recipient',
  text: `WITH moved AS (
           UPDATE campaign_recipients SET status = $3, error = $4, message_id = $5, sent_at = $6, attempts = attempts + $7::int, updated_at = now()
           WHERE campaign_id = $1 AND contact_id = $2 AND status = 'pending' RETURNING 1)
         UPDATE campaigns SET
           sent_count = sent_count + CASE WHEN $3 = 'sent' THEN (SELECT count(*) FROM moved)::int ELSE 0 END,
           failed_count = failed_count + CASE WHEN $3 = 'failed' THEN (SELECT count(*) FROM moved)::int ELSE 0 END,
           skipped_count = skipped_count + CASE WHEN $3 = 'skipped' THEN (SELECT count(*) FROM moved)::int ELSE 0 END,
           next_send_at = COALESCE($8, next_send_at),
           backoff_level = CASE WHEN $3 = 'sent' THEN 0 ELSE backoff_level END,
           last_error = CASE WHEN $3 = 'sent' THEN '' ELSE last_error END,
           lease_until = CASE WHEN lease_owner = $9 THEN now() + $10 * interval '1 millisecond' ELSE lease_until END,
           updated_at = now()
         WHERE id = $1
         RETURNING status, lease_owner, schedule`,
};

export interface RecordDetail {
  error?: string;
  messageId?: string;
  sentAt?: Date;
  /** A send was attempted (counts in the recipient's attempts). */
  attempted: boolean;
  /** The campaign's next send, when this one took a send slot. */
  nextSendAt?: Date;
}

export interface CampaignState {
  status: CampaignStatus;
  lease_owner: string | null;
  schedule: Date | null;
}

export async function recordOutcome(
  db: Queryable,
  campaignId: string,
  contactId: string,
  outcome: Outcome,
  d: RecordDetail,
  owner: string,
  leaseMs: number,
): Promise<CampaignState | undefined> {
  const { rows } = await db.query<CampaignState>({
    ...RECORD,
    values: [
      campaignId,
      contactId,
      outcome,
      d.error ?? '',
      d.messageId ?? null,
      d.sentAt ?? null,
      d.attempted ? 1 : 0,
      d.nextSendAt ?? null,
      owner,
      leaseMs,
    ],
  });
  return rows[0];
}

/** Pacing and backoff state, written as the sender goes so a restart keeps the pace. */
export async function pace(db: Queryable, id: string, nextSendAt: Date, backoffLevel: number, error?: string): Promise<void> {
  await db.query(`UPDATE campaigns SET next_send_at = $2, backoff_level = $3, last_error = COALESCE($4, last_error) WHERE id = $1`, [
    id,
    nextSendAt,
    backoffLevel,
    error ?? null,
  ]);
}

/** active → completed once the snapshot is complete and no recipient is pending. */
export async function completeIfDone(db: Queryable, id: string): Promise<CampaignRow | undefined> {
  const { rows } = await db.query<CampaignRow>(
    `UPDATE campaigns c SET status = 'completed', completed_at = now(), lease_owner = NULL, lease_until = NULL, updated_at = now()
     WHERE c.id = $1 AND c.status = 'active' AND c.snapshot_done
       AND NOT EXISTS (SELECT 1 FROM campaign_recipients r WHERE r.campaign_id = c.id AND r.status = 'pending')
     RETURNING *`,
    [id],
  );
  return rows[0];
}

/** Read receipts: the campaigns whose sent messages were seen, with how many more recipients each. */
export async function addSeen(db: Queryable, counts: Map<string, number>): Promise<void> {
  for (const [id, n] of counts) {
    await db.query('UPDATE campaigns SET seen_count = seen_count + $2 WHERE id = $1', [id, n]);
  }
}

/** Replies: the campaigns whose sent message a contact's message answers get one more reply each. */
export async function addReplies(db: Queryable, counts: Map<string, number>): Promise<void> {
  for (const [id, n] of counts) {
    await db.query('UPDATE campaigns SET replied_count = replied_count + $2 WHERE id = $1', [id, n]);
  }
}
