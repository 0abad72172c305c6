import type { Queryable } from '@crm/db';
import type { SlaAnchors, SlaDue, SlaWindows } from './sla-clock';

/** Every write that adds or moves a breach due time NOTIFYs here in its transaction: instances sleeping longer wake. */
export const SLA_CHANNEL = 'messaging_sla_due';

/** A policy as the clock and the breach need it. */
export interface SlaPolicyClock extends SlaWindows {
  id: string;
  notify: string[];
  reassign: boolean;
}

/** A conversation's clock, locked by the caller. */
export interface SlaClockRow {
  id: string;
  org_id: string;
  chatnet_account_id: string;
  contact_id: string | null;
  assignee_id: string | null;
  status: string;
  sla_policy_id: string | null;
  sla_opened_at: Date | null;
  sla_waiting_since: Date | null;
  sla_replied: boolean;
  sla_first_response_due_at: Date | null;
  sla_next_response_due_at: Date | null;
  sla_resolution_due_at: Date | null;
  sla_due_at: Date | null;
  sla_breached_at: Date | null;
  sla_breached: string[];
}

const POLICY = `p.id, p.first_response_minutes AS "firstResponseMinutes", p.next_response_minutes AS "nextResponseMinutes",
  p.resolution_minutes AS "resolutionMinutes", p.business_hours_only AS "businessHoursOnly", p.notify, p.reassign`;

const CLOCK = `c.id, c.org_id, c.chatnet_account_id, c.contact_id, c.assignee_id, c.status, c.sla_policy_id, c.sla_opened_at,
  c.sla_waiting_since, c.sla_replied, c.sla_first_response_due_at, c.sla_next_response_due_at, c.sla_resolution_due_at,
  c.sla_due_at, c.sla_breached_at, c.sla_breached`;

export const anchorsOf = (r: SlaClockRow): SlaAnchors => ({
  openedAt: r.sla_opened_at,
  waitingSince: r.sla_waiting_since,
  replied: r.sla_replied,
  breached: r.sla_breached,
});

const notify = (db: Queryable) => db.query(`SELECT pg_notify('${SLA_CHANNEL}', '')`);

/**
 * The policy an account follows (if any) and whether the conversation has a clock to clear (without locking it), in one
 * round trip: every message's bookkeeping asks both, and most conversations have neither.
 */
export async function policyAndClock(
  db: Queryable,
  orgId: string,
  accountId: string,
  conversationId: string,
): Promise<{ policy?: SlaPolicyClock; hasClock: boolean }> {
  const { rows } = await db.query<SlaPolicyClock & { has_clock: boolean }>(
    `SELECT ${POLICY}, EXISTS (SELECT 1 FROM conversations c WHERE c.org_id = $1 AND c.id = $3 AND c.sla_policy_id IS NOT NULL) AS has_clock
     FROM (SELECT 1) AS one LEFT JOIN (account_sla a JOIN sla_policies p ON p.id = a.policy_id) ON a.org_id = $1 AND a.chatnet_account_id = $2`,
    [orgId, accountId, conversationId],
  );
  const { has_clock: hasClock, ...policy } = rows[0];
  return { policy: policy.id ? policy : undefined, hasClock };
}

/**
 * Which of a batch's conversations the SLA bookkeeping concerns, in one round trip: those on an account that follows a
 * policy, or still holding a clock to clear. Most have neither, and each would otherwise cost policyAndClock's query.
 * The answer is the items' indices.
 */
export async function concernedBySla(
  db: Queryable,
  items: Array<{ orgId: string; accountId: string; conversationId: string }>,
): Promise<Set<number>> {
  if (items.length === 0) return new Set();
  const { rows } = await db.query<{ i: number }>(
    `SELECT t.i::int AS i FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) WITH ORDINALITY AS t (org_id, account_id, conversation_id, i)
     WHERE EXISTS (SELECT 1 FROM account_sla a JOIN sla_policies p ON p.id = a.policy_id WHERE a.org_id = t.org_id AND a.chatnet_account_id = t.account_id)
        OR EXISTS (SELECT 1 FROM conversations c WHERE c.org_id = t.org_id AND c.id = t.conversation_id AND c.sla_policy_id IS NOT NULL)`,
    [items.map((x) => x.orgId), items.map((x) => x.accountId), items.map((x) => x.conversationId)],
  );
  return new Set(rows.map((r) => r.i - 1));
}

export async function policy(db: Queryable, orgId: string, id: string): Promise<SlaPolicyClock | undefined> {
  const { rows } = await db.query<SlaPolicyClock>(`SELECT ${POLICY} FROM sla_policies p WHERE p.org_id = $1 AND p.id = $2`, [orgId, id]);
  return rows[0];
}

export async function lockClock(db: Queryable, orgId: string, id: string): Promise<SlaClockRow | undefined> {
  const { rows } = await db.query<SlaClockRow>(`SELECT ${CLOCK} FROM conversations c WHERE c.org_id = $1 AND c.id = $2 FOR UPDATE OF c`, [orgId, id]);
  return rows[0];
}

/** Open conversations of some accounts (or of a policy), locked, for re-applying a policy change to them. */
export async function lockOpenClocks(db: Queryable, orgId: string, by: { accountIds: string[] } | { policyId: string }): Promise<SlaClockRow[]> {
  const [cond, value] = 'policyId' in by ? ['c.sla_policy_id = $2', by.policyId] : ['c.chatnet_account_id = ANY($2::uuid[])', by.accountIds];
  const { rows } = await db.query<SlaClockRow>(
    `SELECT ${CLOCK} FROM conversations c WHERE c.org_id = $1 AND ${cond} AND (c.status NOT IN ('closed', 'archived') OR c.sla_policy_id IS NOT NULL)
     ORDER BY c.id FOR UPDATE OF c`,
    [orgId, value],
  );
  return rows;
}

/** Unread counts of conversations: whether the contact waits for a reply now (for a policy attached mid-conversation). */
export async function waitingNow(db: Queryable, ids: string[]): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM conversations WHERE id = ANY($1::uuid[]) AND unreplied_count > 0', [ids]);
  return new Set(rows.map((r) => r.id));
}

/** A conversation's clock as computed (policy null: no SLA, every column cleared); `newCycle` forgets the last breach. */
export async function writeClock(
  db: Queryable,
  r: SlaClockRow,
  policyId: string | null,
  anchors: SlaAnchors,
  due: SlaDue,
  opts: { newCycle: boolean },
): Promise<void> {
  await db.query(
    `UPDATE conversations SET sla_policy_id = $2, sla_opened_at = $3, sla_waiting_since = $4, sla_replied = $5, sla_breached = $6,
            sla_first_response_due_at = $7, sla_next_response_due_at = $8, sla_resolution_due_at = $9, sla_due_at = $10, sla_warn_at = $11,
            sla_breached_at = CASE WHEN $12 OR $2::uuid IS NULL THEN NULL ELSE sla_breached_at END
      WHERE id = $1`,
    [
      r.id,
      policyId,
      anchors.openedAt,
      anchors.waitingSince,
      anchors.replied,
      anchors.breached,
      due.firstResponseDueAt,
      due.nextResponseDueAt,
      due.resolutionDueAt,
      due.dueAt,
      due.warnAt,
      opts.newCycle,
    ],
  );
  if (due.dueAt && (!r.sla_due_at || due.dueAt.getTime() < r.sla_due_at.getTime())) await notify(db);
}

/** Windows missed: recorded on the conversation (status breached), the timer's due row moved to the next window. */
export async function markBreached(db: Queryable, id: string, breached: string[], at: Date, due: Pick<SlaDue, 'dueAt' | 'warnAt'>): Promise<void> {
  await db.query('UPDATE conversations SET sla_breached = $2, sla_breached_at = $3, sla_due_at = $4, sla_warn_at = $5 WHERE id = $1', [
    id,
    breached,
    at,
    due.dueAt,
    due.warnAt,
  ]);
}

/** The timer's due row moved (null: nothing pending). */
export async function moveDue(db: Queryable, id: string, dueAt: Date | null): Promise<void> {
  await db.query('UPDATE conversations SET sla_due_at = $2 WHERE id = $1', [id, dueAt]);
}

/** How a window ended (the report's record); the first word stands: a breach is never met later. */
export async function recordOutcome(
  db: Queryable,
  r: { orgId: string; conversationId: string; policyId: string; target: string; dueAt: Date; outcome: 'met' | 'breached'; at: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO sla_outcomes (org_id, conversation_id, policy_id, target, due_at, outcome, at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
    [r.orgId, r.conversationId, r.policyId, r.target, r.dueAt, r.outcome, r.at],
  );
}

export interface SlaReportRow {
  policyId: string;
  name: string;
  conversations: number;
  breached: number;
}

/** Per policy of the org (oldest first): conversations with a window that ended in [from, to), and those with a breach. */
export async function report(db: Queryable, orgId: string, from: Date, to: Date): Promise<SlaReportRow[]> {
  const { rows } = await db.query<SlaReportRow>(
    `SELECT p.id AS "policyId", p.name, count(DISTINCT o.conversation_id)::int AS conversations,
            count(DISTINCT o.conversation_id) FILTER (WHERE o.outcome = 'breached')::int AS breached
       FROM sla_policies p
       LEFT JOIN sla_outcomes o ON o.policy_id = p.id AND o.org_id = p.org_id AND o.at >= $2 AND o.at < $3
      WHERE p.org_id = $1
      GROUP BY p.id, p.name, p.created_at ORDER BY p.created_at, p.id`,
    [orgId, from, to],
  );
  return rows;
}

/** A breach that could not be recorded (the database answered an error): tried again after `ms`. */
export async function retryLater(db: Queryable, id: string, ms: number): Promise<void> {
  await db.query(`UPDATE conversations SET sla_due_at = now() + $2 * interval '1 millisecond' WHERE id = $1 AND sla_due_at <= now()`, [id, ms]);
}

/** Due conversations (ids), nearest first; each is locked again (SKIP LOCKED) by the instance that breaches it. */
export async function dueIds(db: Queryable, limit: number): Promise<Array<{ id: string; org_id: string }>> {
  const { rows } = await db.query<{ id: string; org_id: string }>(
    'SELECT id, org_id FROM conversations WHERE sla_due_at <= now() ORDER BY sla_due_at LIMIT $1 FOR UPDATE SKIP LOCKED',
    [limit],
  );
  return rows;
}

/**
 * The due row locked for its breach, or undefined when another instance holds it or it is no longer due; with the
 * database's time, which decided it was due (an instance's clock may lag behind it).
 */
export async function lockDue(db: Queryable, id: string): Promise<(SlaClockRow & { now: Date }) | undefined> {
  const { rows } = await db.query<SlaClockRow & { now: Date }>(
    `SELECT ${CLOCK}, now() AS now FROM conversations c WHERE c.id = $1 AND c.sla_due_at <= now() FOR UPDATE OF c SKIP LOCKED`,
    [id],
  );
  return rows[0];
}

/** Milliseconds (by the database's clock) until the nearest breach falls due; null: none. */
export async function nextDueInMs(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ ms: string | null }>(
    `SELECT (extract(epoch FROM min(sla_due_at) - now()) * 1000)::text AS ms FROM conversations WHERE sla_due_at IS NOT NULL`,
  );
  return rows[0].ms === null ? null : Number(rows[0].ms);
}
