import { z } from 'zod';
import { messagingRules as rules } from '@crm/validation';
import { parseDateOrTime, s } from '../http/validate';
import { SetPriority } from './chat.routes';

const uuid = (what: string) => z.string({ error: 'is required' }).trim().uuid(`must be a ${what} id`);
/** An id or null (nobody, no team): `required` says so when it is left out. */
const nullableId = (what: string) =>
  z.union([z.null(), z.string().trim().uuid()], {
    error: (issue) => (issue.input === undefined ? `is required (a ${what} id, or null)` : `must be a ${what} id or null`),
  });

/**
 * One action of a macro, with the fields of the endpoint that does the same thing (issue #29): a send's content and
 * contentType, a note's content, an assignee (and optionally a team), a status, a priority, a folder, a snooze in
 * minutes from the run or until a time. messaging checks the same rules (@crm/validation messagingRules.macroAction).
 */
export const MacroAction = z.discriminatedUnion(
  'type',
  [
    z.object({
      type: z.literal('send_message'),
      content: s.requiredText(rules.CONTENT_MAX),
      contentType: z.string({ error: rules.CONTENT_TYPE_MESSAGE }).trim().regex(rules.CONTENT_TYPE_PATTERN, rules.CONTENT_TYPE_MESSAGE).optional(),
    }),
    z.object({ type: z.literal('add_note'), content: s.requiredText(rules.CONVERSATION_NOTE_MAX) }),
    z.object({ type: z.literal('assign'), assigneeId: nullableId('user'), teamId: nullableId('team').optional() }),
    z.object({ type: z.literal('set_status'), status: z.enum(rules.MACRO_STATUSES as [string, ...string[]], { error: rules.MACRO_STATUS_MESSAGE }) }),
    z.object({ type: z.literal('set_priority'), priority: SetPriority.shape.priority }),
    z.object({ type: z.literal('add_to_folder'), folderId: uuid('chat folder') }),
    z
      .object({
        type: z.literal('snooze'),
        minutes: z
          .number({ error: rules.SNOOZE_MINUTES_MESSAGE })
          .int(rules.SNOOZE_MINUTES_MESSAGE)
          .min(1, rules.SNOOZE_MINUTES_MESSAGE)
          .max(rules.SNOOZE_MINUTES_MAX, rules.SNOOZE_MINUTES_MESSAGE)
          .optional(),
        // Sent on as its UTC instant; whether it still lies ahead is decided when the macro runs.
        snoozedUntil: s
          .timestamp()
          .transform((v) => parseDateOrTime(v)!.at.toISOString())
          .optional(),
      })
      .refine((a) => (a.minutes === undefined) !== (a.snoozedUntil === undefined), { path: ['minutes'], message: rules.SNOOZE_ONE_OF }),
  ],
  { error: `must be one of ${rules.MACRO_ACTION_TYPES.join(', ')}` },
);

const Actions = z
  .array(MacroAction, { error: 'must be an array of actions' })
  .min(1, rules.MACRO_ACTIONS_EMPTY)
  .max(rules.MACRO_ACTIONS_MAX, rules.MACRO_ACTIONS_TOO_MANY);

export const NewMacro = z.object({
  name: s.requiredText(rules.MACRO_NAME_MAX),
  shared: z.boolean({ error: 'is required (true or false)' }),
  actions: Actions,
});
export const MacroPatch = z.object({
  name: s.requiredText(rules.MACRO_NAME_MAX).optional(),
  shared: z.boolean({ error: 'must be true or false' }).optional(),
  actions: Actions.optional(),
});
export const MacroQuery = z.object({
  shared: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .optional()
    .describe('true: only shared macros; false: only your personal ones'),
});

const iso = () => z.string().meta({ description: 'ISO 8601 UTC timestamp' });

/** A macro's action as messaging keeps it (macroActionOut): the fields of the endpoint that does the same thing. */
export const StoredMacroAction = z.discriminatedUnion('type', [
  z.object({ type: z.literal('send_message'), content: z.string(), contentType: z.string() }),
  z.object({ type: z.literal('add_note'), content: z.string() }),
  z.object({
    type: z.literal('assign'),
    assigneeId: z.string().nullable().meta({ description: 'null: nobody' }),
    teamId: z.string().nullable().optional().meta({ description: 'absent: the conversation keeps its team; null: no team' }),
  }),
  z.object({ type: z.literal('set_status'), status: z.enum(rules.MACRO_STATUSES as [string, ...string[]]) }),
  z.object({ type: z.literal('set_priority'), priority: z.enum(rules.CONVERSATION_PRIORITIES).nullable() }),
  z.object({ type: z.literal('add_to_folder'), folderId: z.string() }),
  z.object({
    type: z.literal('snooze'),
    minutes: z.number().int().optional().meta({ description: 'snoozed this many minutes from the run' }),
    snoozedUntil: iso().optional().meta({ description: 'snoozed until this time (it must still lie ahead when the macro runs)' }),
  }),
]);

/** A macro (macroOut is typed by it): its actions as written (snooze's snoozedUntil as its UTC instant). */
export const Macro = z.object({
  id: z.string(),
  name: z.string(),
  shared: z.boolean().meta({ description: 'true: the organization’s (team leads and above write it); false: the owner’s alone' }),
  ownerId: z.string().nullable().meta({ description: 'who made it; null for a shared macro made with an API key' }),
  actions: z.array(StoredMacroAction),
  createdAt: iso(),
  updatedAt: iso(),
});

/** A run of a macro (macroRunOut is typed by it): one result per action, in order. */
export const MacroRun = z.object({
  results: z.array(
    z.object({
      type: z.enum(rules.MACRO_ACTION_TYPES),
      ok: z.boolean(),
      error: z
        .object({ code: z.string(), message: z.string() })
        .nullable()
        .meta({ description: 'why it failed: the code and message its own endpoint would have answered; null when ok' }),
    }),
  ),
});
