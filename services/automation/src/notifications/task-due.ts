import type { PoolClient } from '@crm/db';
import { eventTraceparent, type ParsedEvent } from '@crm/events';
import { isUuid } from '@crm/validation';
import * as notifications from './notifications';

/** "2031-03-10 09:30 UTC": the time as stored; the client shows it in the reader's zone. */
const utcText = (at: string) => `${at.slice(0, 16).replace('T', ' ')} UTC`;

/**
 * crm's `task.due` → one `task_due` notification for the task's assignee (none assigned: nobody to tell), and its
 * notification.created, which the gateway pushes to their socket. The id derives from the event (one per task and
 * due time), so a redelivered event notifies once; `resourceId` is the task.
 */
export async function taskDue(event: ParsedEvent<'task.due'>, db: PoolClient): Promise<boolean> {
  const t = event.data.task;
  if (!t.assigneeId || !isUuid(t.assigneeId)) return false;
  const title = t.title.trim() || 'A task';
  return notifications.create(db, notifications.derivedId('task_due', event.id), {
    orgId: event.orgId,
    userId: t.assigneeId.toLowerCase(),
    type: 'task_due',
    title: `Task due: ${title}`,
    message: t.dueAt ? `${title} was due at ${utcText(t.dueAt)}.` : `${title} is due.`,
    resourceId: t.id,
    traceparent: eventTraceparent(event),
  });
}
