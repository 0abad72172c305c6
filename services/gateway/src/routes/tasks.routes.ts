import { routeArea } from '../http/route-area';
import { responseContract } from '../http/response-contract';
import { page } from './common.schemas';
import type { RouteDeps, ServiceRoutes } from './deps';
import { taskOut } from './tasks.out';
import { NewTask, Task, TaskPatch, TaskQuery } from './tasks.schemas';

const VISIBILITY =
  'An agent under `assigned` inbox visibility sees the tasks assigned to or created by them and the tasks on conversations they can see; any other task answers 404.';

/** Tasks (crm's TaskService), internal API (bearer): served and documented from these declarations. */
export const taskRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Tasks' });
const tasks = (deps: RouteDeps) => deps.clients.crmTasks;

taskRoutes.route('GET /tasks', {
  summary: 'Tasks, soonest due first (tasks without a due time last)',
  description: `Filters: assigneeId (\`me\` or a user id), status (open, done), contactId, conversationId, dueBefore. ${VISIBILITY}`,
  query: TaskQuery,
  paging: { limit: 50, max: 100 },
  response: page(Task),
  handler: async ({ query, page, ctx, deps }) => {
    const out = await tasks(deps).ListTasks({ ...page, ...query }, ctx);
    return { data: out.data.map(taskOut), pagination: out.pagination! };
  },
});
taskRoutes.route('POST /tasks', {
  summary: 'Create a task, optionally due at a time, assigned to a user and on a contact and/or a conversation',
  description:
    '400 naming the field (title missing, assigneeId not an active user of the organization, a malformed id or time); 404 when the contact or ' +
    'conversation is not the organization’s or not visible to the caller. Emits task.created; on a contact, the contact’s timeline gets a ' +
    '`task_created` activity. Within 2 s of dueAt the assignee gets a `task_due` notification (socket `notification`) and task.due is emitted.',
  body: NewTask,
  status: 201,
  response: Task,
  errors: [404],
  handler: async ({ body, ctx, deps }) => taskOut(await tasks(deps).CreateTask(body, ctx)),
});
taskRoutes.route('GET /tasks/:id', {
  summary: 'One task',
  description: VISIBILITY,
  response: Task,
  handler: async ({ param, ctx, deps }) => taskOut(await tasks(deps).GetTask({ id: param('id') }, ctx)),
});
taskRoutes.route('PUT /tasks/:id', {
  summary: 'Change a task; only the fields sent change (null clears dueAt and the references)',
  description:
    'status done sets completedAt (emits task.completed; the contact’s timeline gets `task_completed`), open clears it. A moved dueAt is ' +
    'notified again at the new time. Same checks as create.',
  body: TaskPatch,
  response: Task,
  handler: async ({ param, body, ctx, deps }) => taskOut(await tasks(deps).UpdateTask({ id: param('id'), ...body }, ctx)),
});
taskRoutes.route('DELETE /tasks/:id', {
  summary: 'Delete a task',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await tasks(deps).DeleteTask({ id: param('id') }, ctx);
  },
});

export function tasksRoutes(deps: RouteDeps): ServiceRoutes {
  return { internal: taskRoutes.router(deps, responseContract(deps.config)) };
}
