import { z } from 'zod';
import type { taskOut } from '../../routes/tasks.out';
import { NewTask, TaskPatch, TaskQuery } from '../../routes/tasks.routes';
import { area } from '../registry';
import { keysMatch } from '../schemas/check';
import { page } from '../schemas/common';

const iso = () => z.string().meta({ description: 'ISO 8601 UTC timestamp' });

/** routes/tasks.out taskOut. */
const Task = z.object({
  id: z.string(),
  title: z.string(),
  notes: z.string().nullable(),
  dueAt: iso().nullable(),
  status: z.enum(['open', 'done']),
  assigneeId: z.string().nullable(),
  contactId: z.string().nullable(),
  conversationId: z.string().nullable(),
  createdBy: z.string().nullable().meta({ description: 'null when an automation rule (create_task) or an API key made it' }),
  createdAt: iso(),
  completedAt: iso().nullable().meta({ description: 'set when status becomes done, cleared when it becomes open again' }),
});
keysMatch<z.infer<typeof Task>, ReturnType<typeof taskOut>>(true);

const VISIBILITY =
  'An agent under `assigned` inbox visibility sees the tasks assigned to or created by them and the tasks on conversations they can see; any other task answers 404.';

const tasks = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Tasks' });
tasks.op('GET /tasks', {
  summary: 'Tasks, soonest due first (tasks without a due time last)',
  description: `Filters: assigneeId (\`me\` or a user id), status (open, done), contactId, conversationId, dueBefore. ${VISIBILITY}`,
  query: TaskQuery,
  paging: { limit: 50, max: 100 },
  responses: { 200: page(Task) },
});
tasks.op('POST /tasks', {
  summary: 'Create a task, optionally due at a time, assigned to a user and on a contact and/or a conversation',
  description:
    '400 naming the field (title missing, assigneeId not an active user of the organization, a malformed id or time); 404 when the contact or ' +
    'conversation is not the organization’s or not visible to the caller. Emits task.created; on a contact, the contact’s timeline gets a ' +
    '`task_created` activity. Within 2 s of dueAt the assignee gets a `task_due` notification (socket `notification`) and task.due is emitted.',
  body: NewTask,
  responses: { 201: Task },
  errors: [404],
});
tasks.op('GET /tasks/:id', { summary: 'One task', description: VISIBILITY, responses: { 200: Task } });
tasks.op('PUT /tasks/:id', {
  summary: 'Change a task; only the fields sent change (null clears dueAt and the references)',
  description:
    'status done sets completedAt (emits task.completed; the contact’s timeline gets `task_completed`), open clears it. A moved dueAt is ' +
    'notified again at the new time. Same checks as create.',
  body: TaskPatch,
  responses: { 200: Task },
});
tasks.op('DELETE /tasks/:id', { summary: 'Delete a task', responses: { 204: null } });

export const taskOps = tasks.ops;
