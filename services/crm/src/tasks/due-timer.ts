import { createHash } from 'node:crypto';
import { directDatabaseUrl } from '@crm/config';
import { ClaimLoop, withTransaction } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import type { Deps } from '../deps';
import * as repo from './tasks.repo';

/** A claimed task is another instance's to raise after this long (this one crashed). Raising is one short transaction. */
const LEASE_MS = 30_000;

/**
 * The event id of a task's task.due for one due time, derived from (task, due time) and shaped as a UUID: should it
 * ever be raised twice, the outbox ignores the repeated id and consumers de-duplicate on it.
 */
function dueEventId(taskId: string, dueAt: Date): string {
  const h = createHash('sha256').update(`task.due\u0000${taskId}\u0000${dueAt.toISOString()}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16], 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * The task due timer (ARCHITECTURE.md, Timers): open tasks whose due time came get their `task.due` raised, once
 * per due time, through the outbox (automation turns it into the assignee's task_due notification). The loop sleeps
 * until the nearest due time (nextDueInMs), woken sooner by the NOTIFY of every write that sets or moves one; rows
 * are claimed FOR UPDATE SKIP LOCKED under a lease, so instances share them and a restart picks up what was due.
 */
export class TaskDueTimer {
  private readonly loop: ClaimLoop<repo.DueTask>;

  constructor(private readonly deps: Deps) {
    this.loop = new ClaimLoop({
      name: 'task due timer',
      databaseUrl: directDatabaseUrl(deps.config),
      channel: repo.TASKS_DUE_CHANNEL,
      nextDueInMs: () => repo.nextDueInMs(deps.pool),
      concurrency: 4,
      claim: (free) => repo.claimDue(deps.pool, free, LEASE_MS),
      work: (t) => this.raise(t),
      describe: (t) => ({ taskId: t.id, orgId: t.org_id }),
      log: deps.log,
    });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async raise(t: repo.DueTask): Promise<void> {
    await withTransaction(this.deps.pool, async (db) => {
      // Completed, moved or deleted since the claim: nothing to raise (a moved one is claimed again at its new time).
      const row = await repo.lockStillDue(db, t);
      if (!row) return;
      await enqueueEvent(db, {
        id: dueEventId(row.id, t.due_at),
        type: 'task.due',
        orgId: row.org_id,
        data: { task: repo.toEventTask(row) },
        // A timer's work: a trace of its own.
        traceparent: undefined,
      });
      await repo.markDueRaised(db, row.id);
    });
  }
}
