import { z } from 'zod';
import { s } from '../http/validate';

// Shapes only; crm checks what needs the org's data (assignee a user of the org: 400; contact and conversation the
// org's and visible to the caller: 404) and applies the same limits again.
const TITLE_MAX = 200;
const NOTES_MAX = 4000;
const id = (what: string) => z.string({ error: `must be ${what} id` }).uuid(`must be ${what} id`);
const iso = () => z.string().meta({ description: 'ISO 8601 UTC timestamp' });
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

/** A task as the API shows it (tasks.out.ts taskOut is typed by it). */
export const Task = z.object({
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
