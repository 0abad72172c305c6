import { Router } from 'express';
import { z } from 'zod';
import type { RouteDeps, ServiceRoutes } from './deps';
import { taskOut } from './tasks.out';
import { ctxOf } from '../http/principal';
import { body, pageParams, query, s } from '../http/validate';

// Shapes only; crm checks what needs the org's data (assignee a user of the org: 400; contact and conversation the
// org's and visible to the caller: 404) and applies the same limits again.
const TITLE_MAX = 200;
const NOTES_MAX = 4000;
const id = (what: string) => z.string({ error: `must be ${what} id` }).uuid(`must be ${what} id`);
/** null (or "") clears an optional reference or time on update; absent leaves it. */
const clearable = <T extends z.ZodType>(schema: T) =>
  z
    .union([schema, z.literal(''), z.null()])
    .transform((v) => (v ?? '') as string)
    .optional();
const notes = z
  .union([s.text(NOTES_MAX), z.null()])
  .transform((v) => v ?? '')
  .optional();

export const NewTask = z.object({
  title: s.requiredText(TITLE_MAX),
  notes,
  dueAt: clearable(s.timestamp()).meta({ description: 'ISO 8601; the assignee is notified (task_due) within 2 s of it' }),
  assigneeId: clearable(id('a user')),
  contactId: clearable(id('a contact')),
  conversationId: clearable(id('a conversation')),
});
export const TaskPatch = z.object({
  title: s.requiredText(TITLE_MAX).optional(),
  notes,
  dueAt: clearable(s.timestamp()),
  status: s
    .enumOf(['open', 'done'] as const)
    .optional()
    .meta({ description: 'done sets completedAt; open clears it' }),
  assigneeId: clearable(id('a user')),
  contactId: clearable(id('a contact')),
  conversationId: clearable(id('a conversation')),
});
export const TaskQuery = z.object({
  assigneeId: z
    .union([z.literal('me'), id('a user')], { error: 'must be "me" or a user id' })
    .optional()
    .meta({ description: '"me" (the caller) or a user id' }),
  status: s.optionalQueryEnum(['open', 'done'] as const),
  contactId: id('a contact').optional(),
  conversationId: id('a conversation').optional(),
  dueBefore: s.timestamp().optional().meta({ description: 'only tasks due before this instant' }),
});

/** Tasks (crm's TaskService), internal API (bearer). */
export function tasksRoutes({ clients }: RouteDeps): ServiceRoutes {
  const r = Router();
  const tasks = () => clients.crmTasks;

  r.get('/tasks', async (req, res) => {
    const q = query(req, TaskQuery);
    const out = await tasks().ListTasks({ ...pageParams(req, 50), ...q }, ctxOf(req, res));
    res.json({ data: out.data.map(taskOut), pagination: out.pagination });
  });
  r.post('/tasks', async (req, res) => {
    res.status(201).json(taskOut(await tasks().CreateTask(body(req, NewTask), ctxOf(req, res))));
  });
  r.get('/tasks/:id', async (req, res) => {
    res.json(taskOut(await tasks().GetTask({ id: req.params.id }, ctxOf(req, res))));
  });
  r.put('/tasks/:id', async (req, res) => {
    res.json(taskOut(await tasks().UpdateTask({ id: req.params.id, ...body(req, TaskPatch) }, ctxOf(req, res))));
  });
  r.delete('/tasks/:id', async (req, res) => {
    await tasks().DeleteTask({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });

  return { internal: r };
}
