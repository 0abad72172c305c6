import { randomUUID } from 'node:crypto';
import { AppError, invalid, notFound, requireCan, traceFields, OrgContext } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import { isUuid, messagingRules as rules, optionalOneOf } from '@crm/validation';
import type { Deps } from '../deps';
import { files } from '../attachments';
import { clampPage, load } from '../conversations';
import { checkUploads, parseInput } from '../send';
import { viewerOf } from '../visibility';
import * as repo from './repo';

/**
 * Scheduled messages: POST /conversations/:id/messages with `sendAt` stores one here instead of sending; the timer
 * (sender.ts) sends it at that time through the ordinary send pipeline. Every read and change is the org's and,
 * for an agent under `assigned` visibility, only of conversations they may see (404 otherwise, as for another org).
 */

const notScheduled = (status: string) =>
  new AppError('already_exists', `This scheduled message is ${status}; only a scheduled one can be changed`, { code: 'not_scheduled' });

/** Still scheduled and not in an instance's hands right now (a change then could not stop the send). */
function requireScheduled(row: repo.ScheduledRow): void {
  if (row.status !== 'scheduled') throw notScheduled(row.status);
  if (row.lease_until && row.lease_until.getTime() > Date.now()) {
    throw new AppError('already_exists', 'This scheduled message is being sent right now', { code: 'scheduled_message_sending' });
  }
}

/** The rows in the API shape, their attachments read in one query. */
async function present(deps: Deps, orgId: string, rows: repo.ScheduledRow[]) {
  const ids = [...new Set(rows.flatMap((r) => r.attachment_ids))];
  const uploads = new Map((await files.findMany(deps.pool, orgId, ids)).map((f) => [f.id, files.toAttachment(f)]));
  return rows.map((r) => repo.toScheduled(r, uploads));
}

export async function create(
  deps: Deps,
  ctx: OrgContext,
  req: { conversationId: string; content?: string; contentType?: string; attachmentIds?: string[]; sendAt?: string; cancelIfReplied?: boolean },
) {
  requireCan(ctx, 'conversations:write');
  const orgId = ctx.orgId;
  const input = parseInput(ctx, req);
  const sendAt = rules.sendAt(req.sendAt);
  const conv = await load(deps, ctx, req.conversationId);
  await checkUploads(deps, orgId, input.attachmentIds);
  const row = await withTransaction(deps.pool, (db) =>
    repo.insert(db, {
      id: randomUUID(),
      orgId,
      conversationId: conv.id,
      content: input.content,
      contentType: input.contentType,
      attachmentIds: input.attachmentIds,
      sendAt,
      cancelIfReplied: req.cancelIfReplied === true,
      createdBy: isUuid(ctx.userId) ? ctx.userId : null,
    }),
  );
  deps.log.debug({ scheduledMessageId: row.id, conversationId: conv.id, sendAt, ...traceFields(ctx) }, 'message scheduled');
  return (await present(deps, orgId, [row]))[0];
}

export async function list(deps: Deps, ctx: OrgContext, req: { conversationId?: string; status?: string; page?: number; limit?: number }) {
  const orgId = ctx.orgId;
  const status = optionalOneOf(req.status || undefined, rules.SCHEDULED_MESSAGE_STATUSES, 'status');
  const conversationId = req.conversationId || undefined;
  if (conversationId !== undefined && !isUuid(conversationId)) throw invalid('conversationId', 'must be an id');
  const p = clampPage(req.page, req.limit, 20, 100);
  const { total, rows } = await repo.page(deps.pool, orgId, { conversationId, status, viewer: viewerOf(ctx) }, p.limit, (p.page - 1) * p.limit);
  return { data: await present(deps, orgId, rows), pagination: { total, page: p.page, limit: p.limit, pages: Math.ceil(total / p.limit) } };
}

async function find(deps: Deps, ctx: OrgContext, id: string) {
  const row = isUuid(id) ? await repo.find(deps.pool, ctx.orgId, id, viewerOf(ctx)) : undefined;
  if (!row) throw notFound('Scheduled message');
  return row;
}

export async function get(deps: Deps, ctx: OrgContext, id: string) {
  return (await present(deps, ctx.orgId, [await find(deps, ctx, id)]))[0];
}

/** PUT: new content and/or sendAt, only while the message is scheduled (else 409). */
export async function update(deps: Deps, ctx: OrgContext, req: { id: string; content?: string; sendAt?: string }) {
  requireCan(ctx, 'conversations:write');
  const orgId = ctx.orgId;
  if (req.content === undefined && req.sendAt === undefined) throw invalid('content', rules.SCHEDULED_CHANGE_REQUIRED);
  const sendAt = req.sendAt === undefined ? undefined : rules.sendAt(req.sendAt);
  if (req.content !== undefined && req.content.length > rules.CONTENT_MAX)
    throw invalid('content', `must be at most ${rules.CONTENT_MAX} characters`);
  const row = await withTransaction(deps.pool, async (db) => {
    const found = isUuid(req.id) ? await repo.find(db, orgId, req.id, viewerOf(ctx), true) : undefined;
    if (!found) throw notFound('Scheduled message');
    requireScheduled(found);
    if (req.content !== undefined && !req.content.trim() && found.attachment_ids.length === 0) throw invalid('content', 'is required');
    return repo.update(db, found.id, { content: req.content, sendAt });
  });
  return (await present(deps, orgId, [row]))[0];
}

/** DELETE: cancels (the row stays, status `cancelled`), only while the message is scheduled (else 409). */
export async function cancel(deps: Deps, ctx: OrgContext, id: string) {
  requireCan(ctx, 'conversations:write');
  await withTransaction(deps.pool, async (db) => {
    const found = isUuid(id) ? await repo.find(db, ctx.orgId, id, viewerOf(ctx), true) : undefined;
    if (!found) throw notFound('Scheduled message');
    requireScheduled(found);
    await repo.cancel(db, found.id, null);
  });
  return { ok: true, message: 'Scheduled message cancelled' };
}
