import { z } from 'zod';
import { Id, Instant } from './common';
import { defineEvent } from './define';

/** The task as crm's API returns it (crm tasks/tasks.repo.ts toTask): what webhooks receive as well. */
export const EventTask = z.object({
  id: Id,
  title: z.string(),
  notes: z.string().nullable(),
  dueAt: Instant.nullable(),
  status: z.enum(['open', 'done']),
  assigneeId: Id.nullable(),
  contactId: Id.nullable(),
  conversationId: Id.nullable(),
  createdBy: Id.nullable(),
  createdAt: Instant,
  completedAt: Instant.nullable(),
});

export const taskCreated = defineEvent({
  type: 'task.created',
  version: 1,
  producers: ['crm'],
  description: "A task was created (by a user, or by an automation rule's create_task); data.task.",
  data: z.object({ task: EventTask }),
  webhook: 'same',
});

export const taskCompleted = defineEvent({
  type: 'task.completed',
  version: 1,
  producers: ['crm'],
  description: 'A task was marked done; data.task (completedAt set).',
  data: z.object({ task: EventTask }),
  webhook: 'same',
});

export const taskDue = defineEvent({
  type: 'task.due',
  version: 1,
  producers: ['crm'],
  description:
    'An open task reached its due time (raised once per due time, within 2 s of it); data.task. Its assignee gets a task_due notification.',
  data: z.object({ task: EventTask }),
  webhook: 'same',
});

export const taskEvents = [taskCreated, taskCompleted, taskDue];
