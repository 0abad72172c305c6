import type { z } from 'zod';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import { page } from './common.schemas';
import type { RouteDeps, ServiceRoutes } from './deps';
import { macroOut, macroRunOut } from './macros.out';
import { Macro, type MacroAction, MacroPatch, MacroQuery, MacroRun, NewMacro } from './macros.schemas';

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

const MACROS =
  'Shared macros are the organization’s: everyone sees and runs them, team leads and above create, change and delete them (403 otherwise). ' +
  'Personal macros are their owner’s alone: anyone else (an admin too) gets 404, as for another organization’s. ' +
  'Actions take the fields of the endpoint that does the same thing: send_message {content, contentType?}, add_note {content}, assign {assigneeId (null: nobody), teamId?}, ' +
  'set_status {status (not snoozed)}, set_priority {priority (null: none)}, add_to_folder {folderId}, snooze {minutes} or {snoozedUntil}; a bad one is 400 naming it (`actions[2].assigneeId`).';
/** The conversations' visibility rule, as the Conversations docs state it. */
const VISIBILITY =
  'With inbox visibility `assigned`, an agent sees only the conversations assigned to them and the unassigned ones of their accounts; others answer 404.';

/**
 * Macros (owned by messaging, issue #29): the org's shared ones (team leads and above write them) and each user's
 * personal ones (nobody else sees them: 404). A run is POST /conversations/:id/macros/:macroId/run; many
 * conversations at once, POST /conversations/bulk with `{action: "macro", macroId}` (chat.routes.ts).
 * Served and documented from these declarations.
 */
export const macroRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Macros' });
const messaging = (deps: RouteDeps) => deps.clients.messaging;

macroRoutes.route('GET /macros', {
  summary: 'The macros you can run: the organization’s shared ones and your personal ones, by name',
  description: MACROS,
  query: MacroQuery,
  paging: { limit: 50, max: 100 },
  response: page(Macro),
  handler: async ({ query: { shared }, page, ctx, deps }) => {
    const out = await messaging(deps).ListMacros({ ...page, shared: shared === undefined ? undefined : shared === 'true' }, ctx);
    return { data: out.data.map(macroOut), pagination: out.pagination! };
  },
});
macroRoutes.route('POST /macros', {
  summary: 'Create a macro (shared: team leads and above)',
  description: MACROS,
  body: NewMacro,
  indexedBody: true,
  status: 201,
  response: Macro,
  errors: [403],
  handler: async ({ body: b, ctx, deps }) =>
    macroOut(await messaging(deps).CreateMacro({ name: b.name, shared: b.shared, actions: b.actions.map(actionMsg), actionsSet: true }, ctx)),
});
macroRoutes.route('PUT /macros/:id', {
  summary: 'Change a macro; only the fields sent change (actions are replaced as a whole)',
  description: `${MACROS} A shared macro made personal becomes the personal macro of whoever did it.`,
  body: MacroPatch,
  indexedBody: true,
  response: Macro,
  errors: [403],
  handler: async ({ param, body: b, ctx, deps }) => {
    const out = await messaging(deps).UpdateMacro(
      { id: param('id'), name: b.name, shared: b.shared, actions: (b.actions ?? []).map(actionMsg), actionsSet: b.actions !== undefined },
      ctx,
    );
    return macroOut(out);
  },
});
macroRoutes.route('DELETE /macros/:id', {
  summary: 'Delete a macro (a shared one: team leads and above)',
  description: MACROS,
  status: 204,
  response: null,
  errors: [403],
  handler: async ({ param, ctx, deps }) => {
    await messaging(deps).DeleteMacro({ id: param('id') }, ctx);
  },
});
macroRoutes.route('POST /conversations/:id/macros/:macroId/run', {
  summary: 'Run a macro on the conversation: every action in order, as you, each through the rules of its own endpoint',
  description:
    'Stopping at nothing: an action that fails records its error (the code and message its own endpoint would have answered) and the next one still runs; ' +
    'the answer lists one result per action, in order. Each run is in the audit log (`macro.run`, the conversation as resource, each action’s outcome in details). ' +
    `404 for a macro you cannot see or a conversation you cannot see. ${VISIBILITY}`,
  response: MacroRun,
  handler: async ({ param, ctx, deps }) =>
    macroRunOut(await messaging(deps).RunMacro({ conversationId: param('id'), macroId: param('macroId') }, ctx)),
});

export function macrosRoutes(deps: RouteDeps): ServiceRoutes {
  return { internal: macroRoutes.router(deps, responseContract(deps.config)) };
}
