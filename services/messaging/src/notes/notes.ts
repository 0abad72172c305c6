import { randomUUID } from 'node:crypto';
import { forbidden, notFound, requireCan, requireUser, roleRank, traceFields, OrgContext } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import type { Deps } from '../deps';
import * as notes from './notes.repo';
import { clampPage, load, EVENTS } from '../conversations';
import { previewOf, resolveMentions } from './mentions';
import { isUuid, messagingRules, requireText } from '@crm/validation';

/**
 * Private notes: what the team writes to itself inside a conversation. They live only here (never handed to
 * the connector, so they cannot reach the chat network), show in the conversation's timeline, and mentioned
 * users hear of them through `conversation.note_created` (automation turns it into notifications).
 */

/** Trimmed, 1 to CONVERSATION_NOTE_MAX characters. */
const noteContent = (value: string | undefined) => requireText(value, 'content', messagingRules.CONVERSATION_NOTE_MAX);

export async function create(deps: Deps, ctx: OrgContext, req: { conversationId: string; content?: string }) {
  requireCan(ctx, 'conversations:write');
  const { orgId, userId } = requireUser(ctx);
  const conv = await load(deps, ctx, req.conversationId);
  const content = noteContent(req.content);
  // Resolved before the transaction: identity is asked over the network, and nothing is written if it cannot answer.
  const [mentioned, authorName] = await Promise.all([resolveMentions(deps.remote, ctx, content), deps.remote.userName(ctx, userId)]);
  const row = await withTransaction(deps.pool, async (db) => {
    const note = await notes.insert(db, { id: randomUUID(), orgId, conversationId: conv.id, authorId: userId, content, mentions: mentioned.userIds });
    await enqueueEvent(db, {
      type: EVENTS.conversationNoteCreated,
      orgId,
      data: {
        conversationId: conv.id,
        noteId: note.id,
        authorId: userId,
        mentions: mentioned.userIds,
        contentPreview: previewOf(content, mentioned.users),
        // So consumers can name who wrote and where without calling back (automation's notification text).
        authorName,
        contactId: conv.contact_id,
        contactName: conv.contact_name,
        createdAt: note.created_at.toISOString(),
      },
      traceparent: ctx.traceparent,
    });
    return note;
  });
  deps.log.debug({ conversationId: conv.id, noteId: row.id, mentions: row.mentions.length, ...traceFields(ctx) }, 'note created');
  return notes.toNote(row);
}

export async function list(deps: Deps, ctx: OrgContext, req: { conversationId: string; page?: number; limit?: number }) {
  const { orgId } = requireUser(ctx);
  const conv = await load(deps, ctx, req.conversationId);
  const p = clampPage(req.page, req.limit, 50, 100);
  const { total, rows } = await notes.page(deps.pool, orgId, conv.id, p.limit, (p.page - 1) * p.limit);
  return { data: rows.map(notes.toNote), pagination: { total, page: p.page, limit: p.limit, pages: Math.ceil(total / p.limit) } };
}

/** The author may delete their note; team leads and above any note of the org. */
export async function remove(deps: Deps, ctx: OrgContext, req: { conversationId: string; noteId: string }) {
  requireCan(ctx, 'conversations:write');
  const { orgId, userId, role } = requireUser(ctx);
  const conv = await load(deps, ctx, req.conversationId);
  const note = isUuid(req.noteId) ? await notes.find(deps.pool, orgId, conv.id, req.noteId) : undefined;
  if (!note) throw notFound('Note');
  if (note.author_id !== userId && roleRank(role) < roleRank('team_lead'))
    throw forbidden('Only the author or a team lead and above may delete this note');
  await notes.remove(deps.pool, orgId, note.id);
  return { ok: true, message: 'Note deleted' };
}
