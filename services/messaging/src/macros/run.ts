import { AppError, invalid, requireCan, traceFields, OrgContext } from '@crm/grpc-kit';
import { recordAudit } from '@crm/events';
import { bulkIds } from '@crm/validation';
import type { Deps } from '../deps';
import { convs, load } from '../conversations';
import { folders } from '../folders';
import { notes } from '../notes';
import { ownership } from '../assignment';
import { sendToConversation } from '../send';
import { setStatus } from '../status';
import { viewerOf } from '../visibility';
import { setPriority } from '../priority';
import { findVisible } from './macros';
import type { MacroAction, MacroRow } from './repo';

/** One action's outcome: `error` is what its own endpoint would have answered (code and message). */
export interface ActionResult {
  type: string;
  ok: boolean;
  error?: { code: string; message: string };
}

/**
 * Each action through the same domain call as its own endpoint, as the caller: the same rules (an agent may not
 * hand someone else's conversation on), the same events, the same errors.
 */
async function perform(deps: Deps, ctx: OrgContext, conversationId: string, a: MacroAction): Promise<void> {
  switch (a.type) {
    case 'send_message':
      await sendToConversation(deps, ctx, { conversationId, content: a.content, contentType: a.contentType });
      return;
    case 'add_note':
      await notes.create(deps, ctx, { conversationId, content: a.content });
      return;
    case 'assign':
      await ownership.assign(deps, ctx, {
        id: conversationId,
        userId: a.assigneeId ?? undefined,
        teamId: a.teamId ?? undefined,
        teamIdSet: a.teamId !== undefined,
      });
      return;
    case 'set_status':
      await setStatus(deps, ctx, { id: conversationId, status: a.status });
      return;
    case 'set_priority':
      await setPriority(deps, ctx, { id: conversationId, priority: a.priority ?? '' });
      return;
    case 'add_to_folder':
      await folders.addConversations(deps, ctx, { folderId: a.folderId, conversationIds: [conversationId] });
      return;
    case 'snooze': {
      const until = 'minutes' in a ? new Date(Date.now() + a.minutes * 60_000).toISOString() : a.snoozedUntil;
      await setStatus(deps, ctx, { id: conversationId, status: 'snoozed', snoozedUntil: until });
      return;
    }
  }
}

/**
 * Every action in order; one that fails records its error and the next still runs ("stopping at nothing"). An
 * unexpected error is logged and shown as `internal`, never with its internals. The run is audited (in the outbox,
 * so the entry reaches identity's log) with each action's outcome.
 */
async function runOn(deps: Deps, ctx: OrgContext, conversationId: string, macro: MacroRow, bulk: boolean): Promise<ActionResult[]> {
  const results: ActionResult[] = [];
  for (const action of macro.actions) {
    try {
      await perform(deps, ctx, conversationId, action);
      results.push({ type: action.type, ok: true });
    } catch (err) {
      if (!(err instanceof AppError))
        deps.log.error({ err, macroId: macro.id, conversationId, action: action.type, ...traceFields(ctx) }, 'macro action failed unexpectedly');
      const error =
        err instanceof AppError ? { code: err.code, message: err.message } : { code: 'internal', message: 'The action failed unexpectedly' };
      results.push({ type: action.type, ok: false, error });
    }
  }
  await recordAudit(deps.pool, ctx, {
    action: 'macro.run',
    resourceType: 'conversation',
    resourceId: conversationId,
    details: {
      macroId: macro.id,
      macroName: macro.name,
      ...(bulk ? { bulk: true } : {}),
      results: results.map((r) => ({ type: r.type, ok: r.ok, ...(r.error ? { code: r.error.code } : {}) })),
    },
  });
  deps.log.debug({ macroId: macro.id, conversationId, failed: results.filter((r) => !r.ok).length, ...traceFields(ctx) }, 'macro run');
  return results;
}

/** POST /conversations/:id/macros/:macroId/run → {results}, one per action in order. 404 for a macro or conversation the caller cannot see. */
export async function runMacro(deps: Deps, ctx: OrgContext, req: { conversationId: string; macroId: string }) {
  requireCan(ctx, 'conversations:write');
  const macro = await findVisible(deps, ctx, req.macroId);
  const conv = await load(deps, ctx, req.conversationId);
  return { results: await runOn(deps, ctx, conv.id, macro, false) };
}

/**
 * The bulk endpoint's `macro` action: the macro run on each conversation the caller may see, one after another (each
 * run is its own unit, with its own audit entry, as a single run is: an action may wait on the chat network, which
 * no transaction may span). A conversation counts as updated when every action succeeded there; otherwise it is
 * listed with the code of its first failed action (`forbidden` for a permission refusal, as in the other actions). Unknown, malformed and other orgs' ids fail as not_found.
 */
export async function runMacroOnMany(deps: Deps, ctx: OrgContext, req: { ids?: string[]; macroId?: string }, maxIds: number) {
  requireCan(ctx, 'conversations:write');
  if (!req.macroId) throw invalid('macroId', 'is required');
  const macro = await findVisible(deps, ctx, req.macroId).catch((err) => {
    if (err instanceof AppError && err.kind === 'not_found')
      throw invalid('macroId', 'is not a macro you can run (shared in this organization, or yours)');
    throw err;
  });
  const { valid, malformed } = bulkIds(req.ids, maxIds);
  const found = await convs.existingIds(deps.pool, ctx.orgId, valid, viewerOf(ctx));
  const failed = [...malformed, ...valid.filter((id) => !found.has(id))].map((id) => ({ id, code: 'not_found' }));
  const updated: string[] = [];
  for (const id of valid.filter((v) => found.has(v))) {
    const firstFailure = (await runOn(deps, ctx, id, macro, true)).find((r) => !r.ok);
    // Permission refusals read `forbidden`, as the other bulk actions' do.
    if (firstFailure) failed.push({ id, code: firstFailure.error!.code === 'permission_denied' ? 'forbidden' : firstFailure.error!.code });
    else updated.push(id);
  }
  await recordAudit(deps.pool, ctx, {
    action: 'conversations.bulk_macro',
    resourceType: 'conversation',
    details: {
      requested: valid.length + malformed.length,
      updated: updated.length,
      failed: failed.length,
      ids: updated,
      failedIds: failed.map((f) => f.id),
      params: { macroId: macro.id, macroName: macro.name },
    },
  });
  return { updated: updated.length, failed };
}
