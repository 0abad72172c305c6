import type { Queryable } from '@crm/db';
import type { ActionDef, IdleSettings, RuleStatus, ScheduleSettings, TriggerType } from '../rule-definitions';

/**
 * The due rows of the timed triggers (migration 012): rule_schedules (each active schedule rule's next firing),
 * schedule_firings (a firing whose runs are being written, a page of list members at a time) and idle_timers (a
 * conversation_idle rule's idle period of one conversation). All three are claimed under a lease with FOR UPDATE SKIP
 * LOCKED, so instances share them and a crashed instance's row comes back when its lease ends.
 */

/** NOTIFY channel of migration 012's triggers (and of idle timers armed): a firing may be earlier than the loops sleep for. */
export const TIMERS_CHANNEL = 'automation_trigger_timers';
export const notifyTimers = (db: Queryable) => db.query(`SELECT pg_notify('${TIMERS_CHANNEL}', '')`);

export interface ScheduleRow {
  rule_id: string;
  org_id: string;
  cron: string;
  timezone: string;
  list_id: string | null;
  next_at: Date;
}

export interface FiringRow {
  rule_id: string;
  fire_at: Date;
  org_id: string;
  list_id: string | null;
  timezone: string;
  after: string;
}

export interface IdleRow {
  rule_id: string;
  conversation_id: string;
  org_id: string;
  contact_id: string | null;
  last_message_at: Date;
  due_at: Date;
}

/** A rule as a firing needs it: is it still there, active, of this trigger, and its steps. */
export interface TimedRule {
  id: string;
  status: RuleStatus;
  trigger_type: TriggerType;
  trigger_config: { schedule?: ScheduleSettings; idle?: IdleSettings };
  actions: ActionDef[];
}

export async function timedRule(db: Queryable, orgId: string, ruleId: string): Promise<TimedRule | undefined> {
  const { rows } = await db.query<TimedRule>({
    name: 'automation_timed_rule',
    text: 'SELECT id, status, trigger_type, trigger_config, actions FROM rules WHERE org_id = $1 AND id = $2',
    values: [orgId, ruleId],
  });
  return rows[0];
}

/** An active schedule rule's row; the next firing kept when cron and zone are unchanged (an edit of the name moves nothing). */
export async function upsertSchedule(db: Queryable, s: Omit<ScheduleRow, 'next_at'>, nextAt: Date): Promise<void> {
  await db.query(
    `INSERT INTO rule_schedules (rule_id, org_id, cron, timezone, list_id, next_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (rule_id) DO UPDATE SET list_id = EXCLUDED.list_id, cron = EXCLUDED.cron, timezone = EXCLUDED.timezone,
       next_at = CASE WHEN rule_schedules.cron = EXCLUDED.cron AND rule_schedules.timezone = EXCLUDED.timezone
                      THEN rule_schedules.next_at ELSE EXCLUDED.next_at END`,
    [s.rule_id, s.org_id, s.cron, s.timezone, s.list_id, nextAt],
  );
}

export async function dropSchedule(db: Queryable, ruleId: string): Promise<void> {
  await db.query('DELETE FROM rule_schedules WHERE rule_id = $1', [ruleId]);
}

export async function dropIdleTimers(db: Queryable, ruleId: string): Promise<void> {
  await db.query('DELETE FROM idle_timers WHERE rule_id = $1', [ruleId]);
}

/** A changed `minutes`: every running idle period of the rule is due at its last message plus the new minutes. */
export async function retimeIdle(db: Queryable, ruleId: string, minutes: number): Promise<void> {
  const { rowCount } = await db.query(
    `UPDATE idle_timers SET due_at = last_message_at + $2 * interval '1 minute' WHERE rule_id = $1 AND due_at <> last_message_at + $2 * interval '1 minute'`,
    [ruleId, minutes],
  );
  if (rowCount) await notifyTimers(db);
}

export interface IdleArm {
  ruleId: string;
  orgId: string;
  conversationId: string;
  contactId: string | null;
  at: string;
  minutes: number;
}

/**
 * A message in a conversation starts (or restarts) its idle period for each idle rule: due at the message's time plus
 * the rule's minutes. An older message than the one the period started from changes nothing (events out of order).
 * A new period may be due before anything the timers sleep for: they are woken. A re-armed period is free to be claimed
 * when due (an instance firing the old one finds its last message changed, and leaves it).
 */
export async function armIdle(db: Queryable, arms: IdleArm[]): Promise<void> {
  if (arms.length === 0) return;
  const { rows } = await db.query<{ inserted: boolean }>({
    name: 'automation_idle_arm',
    text: `INSERT INTO idle_timers (rule_id, conversation_id, org_id, contact_id, last_message_at, due_at)
           SELECT r, c, o, k, a, a + m * interval '1 minute'
           FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::timestamptz[], $6::float8[]) AS x(r, c, o, k, a, m)
           ON CONFLICT (rule_id, conversation_id) DO UPDATE SET last_message_at = EXCLUDED.last_message_at, due_at = EXCLUDED.due_at,
             contact_id = COALESCE(EXCLUDED.contact_id, idle_timers.contact_id), lease_until = NULL
           WHERE idle_timers.last_message_at < EXCLUDED.last_message_at
           RETURNING (xmax = 0) AS inserted`,
    values: [
      arms.map((a) => a.ruleId),
      arms.map((a) => a.conversationId),
      arms.map((a) => a.orgId),
      arms.map((a) => a.contactId),
      arms.map((a) => a.at),
      arms.map((a) => a.minutes),
    ],
  });
  if (rows.some((r) => r.inserted)) await notifyTimers(db);
}

/** Take up to `limit` due rows of one table under a lease (SKIP LOCKED: instances share it). */
export async function claimSchedules(db: Queryable, limit: number, leaseMs: number): Promise<ScheduleRow[]> {
  const { rows } = await db.query<ScheduleRow>({
    name: 'automation_schedules_claim',
    text: `UPDATE rule_schedules s SET lease_until = now() + $2 * interval '1 millisecond'
           WHERE s.rule_id IN (
             SELECT rule_id FROM rule_schedules WHERE next_at <= now() AND (lease_until IS NULL OR lease_until < now())
             ORDER BY next_at LIMIT $1 FOR UPDATE SKIP LOCKED)
           RETURNING s.rule_id, s.org_id, s.cron, s.timezone, s.list_id, s.next_at`,
    values: [limit, leaseMs],
  });
  return rows;
}

export async function claimFirings(db: Queryable, limit: number, leaseMs: number): Promise<FiringRow[]> {
  const { rows } = await db.query<FiringRow>({
    name: 'automation_firings_claim',
    text: `UPDATE schedule_firings f SET lease_until = now() + $2 * interval '1 millisecond'
           WHERE (f.rule_id, f.fire_at) IN (
             SELECT rule_id, fire_at FROM schedule_firings WHERE lease_until IS NULL OR lease_until < now()
             ORDER BY fire_at LIMIT $1 FOR UPDATE SKIP LOCKED)
           RETURNING f.rule_id, f.fire_at, f.org_id, f.list_id, f.timezone, f.after`,
    values: [limit, leaseMs],
  });
  return rows;
}

export async function claimIdle(db: Queryable, limit: number, leaseMs: number): Promise<IdleRow[]> {
  const { rows } = await db.query<IdleRow>({
    name: 'automation_idle_claim',
    text: `UPDATE idle_timers t SET lease_until = now() + $2 * interval '1 millisecond'
           WHERE (t.rule_id, t.conversation_id) IN (
             SELECT rule_id, conversation_id FROM idle_timers WHERE due_at <= now() AND (lease_until IS NULL OR lease_until < now())
             ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED)
           RETURNING t.rule_id, t.conversation_id, t.org_id, t.contact_id, t.last_message_at, t.due_at`,
    values: [limit, leaseMs],
  });
  return rows;
}

/**
 * The timer facility: milliseconds (by the database's clock) until the nearest schedule, firing or idle period falls
 * due, or a lease on one ends (its instance died); null when nothing waits.
 */
export async function nextDueInMs(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ ms: number | null }>({
    name: 'automation_trigger_timers_next_due',
    text: `SELECT extract(epoch FROM LEAST(
             (SELECT min(GREATEST(next_at, COALESCE(lease_until, next_at))) FROM rule_schedules),
             (SELECT min(COALESCE(lease_until, now())) FROM schedule_firings),
             (SELECT due_at FROM idle_timers WHERE lease_until IS NULL ORDER BY due_at LIMIT 1),
             (SELECT lease_until FROM idle_timers WHERE lease_until IS NOT NULL ORDER BY lease_until LIMIT 1)) - now()) * 1000 AS ms`,
  });
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? null : Number(ms);
}

/** The claimed schedule row, locked, if it still fires at the claimed time (not changed, paused or fired meanwhile). */
export async function lockSchedule(db: Queryable, s: ScheduleRow): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM rule_schedules WHERE rule_id = $1 AND next_at = $2 FOR UPDATE', [s.rule_id, s.next_at]);
  return rows.length === 1;
}

/** The firing of (rule, time); a second insert for the same time does nothing. */
export async function insertFiring(db: Queryable, s: ScheduleRow): Promise<void> {
  await db.query(`INSERT INTO schedule_firings (rule_id, fire_at, org_id, list_id, timezone) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, [
    s.rule_id,
    s.next_at,
    s.org_id,
    s.list_id,
    s.timezone,
  ]);
}

/** The schedule's next firing (null: it never fires again, so its row goes). */
export async function advanceSchedule(db: Queryable, ruleId: string, next: Date | null): Promise<void> {
  if (next) await db.query('UPDATE rule_schedules SET next_at = $2, lease_until = NULL WHERE rule_id = $1', [ruleId, next]);
  else await dropSchedule(db, ruleId);
}

/** The claimed firing, locked, if it is still where this instance left it (no other instance took it over). */
export async function lockFiring(db: Queryable, f: FiringRow, after: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM schedule_firings WHERE rule_id = $1 AND fire_at = $2 AND after = $3 FOR UPDATE', [
    f.rule_id,
    f.fire_at,
    after,
  ]);
  return rows.length === 1;
}

/** Members up to `after` have their runs; the lease is renewed for the next page. */
export async function moveFiring(db: Queryable, f: FiringRow, after: string, leaseMs: number): Promise<void> {
  await db.query(`UPDATE schedule_firings SET after = $3, lease_until = now() + $4 * interval '1 millisecond' WHERE rule_id = $1 AND fire_at = $2`, [
    f.rule_id,
    f.fire_at,
    after,
    leaseMs,
  ]);
}

export async function dropFiring(db: Queryable, f: FiringRow): Promise<void> {
  await db.query('DELETE FROM schedule_firings WHERE rule_id = $1 AND fire_at = $2', [f.rule_id, f.fire_at]);
}

/** Let a claimed firing go at once (this instance is stopping): another instance, or this one restarted, goes on. */
export async function releaseFiring(db: Queryable, f: FiringRow): Promise<void> {
  await db.query('UPDATE schedule_firings SET lease_until = NULL WHERE rule_id = $1 AND fire_at = $2', [f.rule_id, f.fire_at]);
}

/** The claimed idle period, locked, if no message re-armed it since the claim. */
export async function lockIdle(db: Queryable, t: IdleRow): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM idle_timers WHERE rule_id = $1 AND conversation_id = $2 AND last_message_at = $3 FOR UPDATE', [
    t.rule_id,
    t.conversation_id,
    t.last_message_at,
  ]);
  return rows.length === 1;
}

/** The period fired (or will not): its row goes; the next message arms a new one. */
export async function dropIdle(db: Queryable, t: IdleRow): Promise<void> {
  await db.query('DELETE FROM idle_timers WHERE rule_id = $1 AND conversation_id = $2 AND last_message_at = $3', [
    t.rule_id,
    t.conversation_id,
    t.last_message_at,
  ]);
}
