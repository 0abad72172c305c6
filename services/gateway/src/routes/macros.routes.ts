import { Router } from 'express';
import { z } from 'zod';
import { messagingRules as rules } from '@crm/validation';
import type { RouteDeps, ServiceRoutes } from './deps';
import { ctxOf } from '../http/principal';
import { indexedBody, pageParams, parseDateOrTime, query, s } from '../http/validate';
import { SetPriority } from './chat.routes';
import { macroOut, macroRunOut } from './macros.out';

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

type Action = z.infer<typeof MacroAction>;

/** A macro action for messaging: null (nobody, no team, no priority) travels as "" (proto3 strings have no null). */
function actionMsg(a: Action) {
  switch (a.type) {
    case 'assign':
      return { type: a.type, assigneeId: a.assigneeId ?? '', teamId: a.teamId === undefined ? undefined : (a.teamId ?? '') };
    case 'set_priority':
      return { type: a.type, priority: a.priority ?? '' };
    default:
      return a;
  }
}

/**
 * Macros (owned by messaging, issue #29): the org's shared ones (team leads and above write them) and each user's
 * personal ones (nobody else sees them: 404). A run is POST /conversations/:id/macros/:macroId/run; many
 * conversations at once, POST /conversations/bulk with `{action: "macro", macroId}` (chat.routes.ts).
 */
export function macrosRoutes({ clients }: RouteDeps): ServiceRoutes {
  const internal = Router();
  const messaging = () => clients.messaging;

  internal.get('/macros', async (req, res) => {
    const { shared } = query(req, MacroQuery);
    const out = await messaging().ListMacros(
      { ...pageParams(req, 50, 100), shared: shared === undefined ? undefined : shared === 'true' },
      ctxOf(req, res),
    );
    res.json({ data: out.data.map(macroOut), pagination: out.pagination });
  });
  internal.post('/macros', async (req, res) => {
    const b = indexedBody(req, NewMacro);
    const out = await messaging().CreateMacro(
      { name: b.name, shared: b.shared, actions: b.actions.map(actionMsg), actionsSet: true },
      ctxOf(req, res),
    );
    res.status(201).json(macroOut(out));
  });
  internal.put('/macros/:id', async (req, res) => {
    const b = indexedBody(req, MacroPatch);
    const out = await messaging().UpdateMacro(
      { id: req.params.id, name: b.name, shared: b.shared, actions: (b.actions ?? []).map(actionMsg), actionsSet: b.actions !== undefined },
      ctxOf(req, res),
    );
    res.json(macroOut(out));
  });
  internal.delete('/macros/:id', async (req, res) => {
    await messaging().DeleteMacro({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });
  internal.post('/conversations/:id/macros/:macroId/run', async (req, res) => {
    res.json(macroRunOut(await messaging().RunMacro({ conversationId: req.params.id, macroId: req.params.macroId }, ctxOf(req, res))));
  });

  return { internal };
}
