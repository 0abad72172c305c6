import { randomUUID } from 'node:crypto';
import { directDatabaseUrl } from '@crm/config';
import { ClaimLoop, type PoolClient, type Queryable, withTransaction } from '@crm/db';
import { status as grpcStatus } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { insertRun, RUNS_CHANNEL } from './runs.repo';
import * as repo from './trigger-timers.repo';
import { EVENT_OF_TIMED_TRIGGER, nextOccurrence, parseCron, type RuleRow } from '../rule-definitions';
import { memberPage, isNotFound } from '../lists';
import { derivedId } from '../notifications';

/** A claimed row is this instance's for this long (renewed after every page of a list); a dead instance's comes back after it. */
const LEASE_MS = 60_000;
/** List members whose runs one transaction writes: a firing over a big list is many short transactions, never one giant one. */
export const SCHEDULE_PAGE = 200;

type Item = { kind: 'schedule'; row: repo.ScheduleRow } | { kind: 'firing'; row: repo.FiringRow } | { kind: 'idle'; row: repo.IdleRow };

const notifyRunners = (db: Queryable) => db.query(`SELECT pg_notify('${RUNS_CHANNEL}', '')`);

/**
 * The timed triggers (issue #32 item 2) on the timer facility: one ClaimLoop sleeping until the nearest due row of
 * rule_schedules, schedule_firings or idle_timers (woken early by NOTIFY when an earlier one is written), claimed
 * under a lease with SKIP LOCKED, so instances share them and restarts lose nothing.
 *
 * - A schedule falling due becomes a firing (rule, scheduled time) and moves to its next time, in one transaction: a
 *   time fires once, whichever instance claims it. Times missed while no instance ran fire once, at start.
 * - A firing writes its runs: one run with no contact, or, with a list, one per member, a page per transaction with
 *   the page's last member recorded, so a restart goes on where it stopped. Event ids derive from (rule, time[,
 *   contact]): a page written twice (a lease that ran out) adds no run.
 * - An idle period falling due writes one run for the conversation, its event id derived from (rule, conversation,
 *   last message), and goes; the next message arms a new one.
 * The runs themselves are the Runner's, as every run is.
 */
export class TriggerTimers {
  private readonly loop: ClaimLoop<Item>;

  constructor(private readonly deps: Deps) {
    this.loop = new ClaimLoop<Item>({
      name: 'automation trigger timers',
      databaseUrl: directDatabaseUrl(deps.config),
      channel: repo.TIMERS_CHANNEL,
      nextDueInMs: () => repo.nextDueInMs(deps.pool),
      concurrency: 4,
      claim: (free) => this.claim(free),
      work: (item) => this.work(item),
      describe: (item) => ({ kind: item.kind, ruleId: item.row.rule_id }),
      log: deps.log,
    });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async claim(free: number): Promise<Item[]> {
    const { pool } = this.deps;
    const items: Item[] = (await repo.claimSchedules(pool, free, LEASE_MS)).map((row) => ({ kind: 'schedule', row }));
    if (items.length < free)
      items.push(...(await repo.claimFirings(pool, free - items.length, LEASE_MS)).map((row) => ({ kind: 'firing' as const, row })));
    if (items.length < free)
      items.push(...(await repo.claimIdle(pool, free - items.length, LEASE_MS)).map((row) => ({ kind: 'idle' as const, row })));
    return items;
  }

  private work(item: Item): Promise<void> {
    if (item.kind === 'schedule') return this.schedule(item.row);
    if (item.kind === 'firing') return this.firing(item.row);
    return this.idle(item.row);
  }

  /** The schedule's time has come: its firing is written and the schedule moves to the time after (both or neither). */
  private async schedule(s: repo.ScheduleRow): Promise<void> {
    await withTransaction(this.deps.pool, async (db) => {
      if (!(await repo.lockSchedule(db, s))) return;
      const rule = await repo.timedRule(db, s.org_id, s.rule_id);
      if (!rule || rule.status !== 'active' || rule.trigger_type !== 'schedule') {
        await repo.dropSchedule(db, s.rule_id);
        return;
      }
      await repo.insertFiring(db, s);
      // From the later of the fired time and now: times missed while no instance ran are not caught up one by one.
      const from = new Date(Math.max(s.next_at.getTime(), Date.now()));
      await repo.advanceSchedule(db, s.rule_id, nextOccurrence(parseCron(s.cron), s.timezone, from) ?? null);
    });
  }

  private async firing(f: repo.FiringRow): Promise<void> {
    const { pool, log } = this.deps;
    const rule = await repo.timedRule(pool, f.org_id, f.rule_id);
    if (!rule || rule.status !== 'active' || rule.trigger_type !== 'schedule') {
      await repo.dropFiring(pool, f);
      return;
    }
    const scheduledAt = f.fire_at.toISOString();
    const base = { scheduledAt, timezone: f.timezone, listId: f.list_id };
    if (!f.list_id) {
      await withTransaction(pool, async (db) => {
        if (!(await repo.lockFiring(db, f, f.after))) return;
        await this.startRun(db, rule, f.org_id, derivedId('automation.schedule', f.rule_id, scheduledAt), { ...base, contactId: null }, null, null);
        await repo.dropFiring(db, f);
        await notifyRunners(db);
      });
      return;
    }
    let after = f.after;
    while (!this.loop.isStopping) {
      let page;
      try {
        const ctx = await this.deps.remote.actingFor(f.org_id, `automation-schedule:${f.rule_id}:${scheduledAt}`);
        page = await memberPage(this.deps, ctx, f.list_id, after, SCHEDULE_PAGE);
      } catch (err) {
        if (isNotFound(err)) {
          log.warn({ ruleId: f.rule_id, listId: f.list_id, scheduledAt }, 'schedule trigger: its customer list is gone; this firing runs for nobody');
          await repo.dropFiring(pool, f);
          return;
        }
        // crm unreachable: the lease runs out and the firing goes on from `after`.
        log.warn({ err, ruleId: f.rule_id, scheduledAt }, 'schedule trigger: crm did not answer with the list members; retrying');
        return;
      }
      const done = !page.nextAfter || page.members.length === 0;
      const kept = await withTransaction(pool, async (db) => {
        if (!(await repo.lockFiring(db, f, after))) return false;
        for (const m of page.members) {
          const contactId = m.id.toLowerCase();
          await this.startRun(
            db,
            rule,
            f.org_id,
            derivedId('automation.schedule', f.rule_id, scheduledAt, contactId),
            { ...base, contactId },
            contactId,
            null,
            {
              ...m,
            },
          );
        }
        if (done) await repo.dropFiring(db, f);
        else await repo.moveFiring(db, f, page.nextAfter, LEASE_MS);
        if (page.members.length) await notifyRunners(db);
        return true;
      });
      // Another instance took the firing over (this lease had run out): it goes on from where it is.
      if (!kept || done) return;
      after = page.nextAfter;
    }
    await repo.releaseFiring(pool, f);
  }

  /** An idle period ran out: one run for the conversation, unless a message re-armed it or its status is not the one asked for. */
  private async idle(t: repo.IdleRow): Promise<void> {
    const { pool, log } = this.deps;
    const rule = await repo.timedRule(pool, t.org_id, t.rule_id);
    const settings = rule?.trigger_config?.idle;
    if (!rule || rule.status !== 'active' || rule.trigger_type !== 'conversation_idle' || !settings) {
      await repo.dropIdle(pool, t);
      return;
    }
    let status: string | undefined;
    if (settings.status) {
      try {
        const detail = await this.deps.remote
          .messaging()
          .GetConversation(
            { id: t.conversation_id, page: 1, limit: 1 },
            await this.deps.remote.actingFor(t.org_id, `automation-idle:${t.rule_id}:${t.conversation_id}`),
          );
        status = detail.conversation?.status;
      } catch (err) {
        if ((err as { code?: number }).code === grpcStatus.NOT_FOUND) {
          await repo.dropIdle(pool, t);
          return;
        }
        // messaging unreachable: the lease runs out and the period is judged again.
        log.warn({ err, ruleId: t.rule_id, conversationId: t.conversation_id }, 'conversation_idle: messaging did not answer; retrying');
        return;
      }
    }
    await withTransaction(pool, async (db) => {
      if (!(await repo.lockIdle(db, t))) return;
      // Not in the status asked for when the time came: this period passes without a run (the next message re-arms).
      if (!settings.status || status === settings.status) {
        const idleSince = t.last_message_at.toISOString();
        await this.startRun(
          db,
          rule,
          t.org_id,
          derivedId('automation.conversation_idle', t.rule_id, t.conversation_id, idleSince),
          { conversationId: t.conversation_id, contactId: t.contact_id, idleSince, minutes: settings.minutes, status: status ?? null },
          t.contact_id,
          t.conversation_id,
        );
        await notifyRunners(db);
      }
      await repo.dropIdle(db, t);
    });
  }

  private async startRun(
    db: PoolClient,
    rule: repo.TimedRule,
    orgId: string,
    eventId: string,
    data: Record<string, unknown>,
    contactId: string | null,
    conversationId: string | null,
    contact?: Record<string, unknown>,
  ): Promise<void> {
    const trigger = rule.trigger_type as 'schedule' | 'conversation_idle';
    const eventType = EVENT_OF_TIMED_TRIGGER[trigger];
    await insertRun(db, {
      id: randomUUID(),
      orgId,
      ruleId: rule.id,
      eventId,
      eventType,
      contactId,
      conversationId,
      triggerType: trigger,
      context: { event: { id: eventId, type: eventType, occurredAt: new Date().toISOString() }, data, ...(contact ? { contact } : {}) },
      actions: rule.actions,
    });
  }
}

/**
 * After a rule is written (in the same transaction): its schedule row and idle periods follow what it is now. An active
 * schedule rule has a row (its next time kept unless cron or zone changed); a rule that is paused, or no longer of that
 * trigger, has none; a changed `minutes` moves every running idle period of the rule.
 */
export async function syncRuleTimers(
  db: Queryable,
  rule: Pick<RuleRow, 'id' | 'org_id' | 'status' | 'trigger_type' | 'trigger_config'>,
): Promise<void> {
  const active = rule.status === 'active';
  const schedule = rule.trigger_config?.schedule;
  if (active && rule.trigger_type === 'schedule' && schedule) {
    const next = nextOccurrence(parseCron(schedule.cron), schedule.timezone, new Date());
    if (next)
      await repo.upsertSchedule(
        db,
        { rule_id: rule.id, org_id: rule.org_id, cron: schedule.cron, timezone: schedule.timezone, list_id: schedule.listId ?? null },
        next,
      );
    else await repo.dropSchedule(db, rule.id);
  } else {
    await repo.dropSchedule(db, rule.id);
  }
  const idle = rule.trigger_config?.idle;
  if (active && rule.trigger_type === 'conversation_idle' && idle) await repo.retimeIdle(db, rule.id, idle.minutes);
  else await repo.dropIdleTimers(db, rule.id);
}
