import { invalid, notFound, OrgContext } from '@crm/grpc-kit';
import { type KeysetRequest, readKeyset } from '@crm/db';
import type { Deps } from '../deps';
import { convs, messages } from '../conversations';
import { forMessages } from '../attachments';
import { isUuid } from '@crm/validation';
import { viewerOf } from '../visibility';

const clamp = (v: number | undefined, def: number, max: number) => Math.min(max, Math.max(1, Math.floor(v || def)));

/**
 * GET /api/public/conversations: most recent first, limit 20 by default, 100 at most. Pages by keyset (the
 * gateway's cursor); order "updated" walks updatedAt ascending for incremental sync.
 */
export async function conversations(deps: Deps, ctx: OrgContext, req: { limit?: number; keyset?: KeysetRequest | null }) {
  // An API key bound to an agent sees what the agent sees (inbox visibility); one with no user, the whole org.
  const page = await convs.listRecentAfter(
    deps.pool,
    ctx.orgId,
    clamp(req.limit, 20, 100),
    readKeyset(req.keyset ?? {}, invalid, true),
    viewerOf(ctx),
  );
  return { conversations: page.rows.map(convs.toPublicConversation), next: page.next };
}

/**
 * GET /api/public/conversations/:id/messages: newest first, limit 50 by default, 200 at most; by keyset as
 * conversations (order "updated": sentAt ascending).
 */
export async function conversationMessages(
  deps: Deps,
  ctx: OrgContext,
  req: { conversationId: string; limit?: number; keyset?: KeysetRequest | null },
) {
  const { orgId } = ctx;
  const keyset = readKeyset(req.keyset ?? {}, invalid);
  const conv = isUuid(req.conversationId) ? await convs.findById(deps.pool, orgId, req.conversationId, false, viewerOf(ctx)) : undefined;
  if (!conv) throw notFound('Conversation');
  const page = await messages.pageAfter(deps.pool, orgId, conv.id, clamp(req.limit, 50, 200), keyset);
  return { messages: page.rows.map((m) => messages.toPublicMessage(m, page.files.get(m.id) ?? [])), next: page.next };
}

/** GET /api/public/messages/:id: one of the org's messages (NOT_FOUND for another org's, unknown or malformed ids). */
export async function message(deps: Deps, ctx: OrgContext, id: string) {
  const { orgId } = ctx;
  const row = isUuid(id) ? await messages.findById(deps.pool, orgId, id) : undefined;
  if (!row) throw notFound('Message');
  // A message of a conversation the caller may not see (inbox visibility) is as unknown as another org's.
  const viewer = viewerOf(ctx);
  if (viewer && !(await convs.findById(deps.pool, orgId, row.conversation_id, false, viewer))) throw notFound('Message');
  const files = await forMessages(deps.pool, orgId, [row.id]);
  return messages.toPublicMessage(row, files.get(row.id) ?? []);
}
