import { CallContext, notFound, requireOrg } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as convs from '../db/conversations.repo';
import * as messages from '../db/messages.repo';
import { isUuid } from './validation';
import { viewerOf } from './visibility';

const clamp = (v: number | undefined, def: number, max: number) => Math.min(max, Math.max(1, Math.floor(v || def)));

/** GET /api/public/conversations: most recent first, limit 20 by default, 100 at most. */
export async function conversations(deps: Deps, ctx: CallContext, req: { limit?: number }) {
  const rows = await convs.listRecent(deps.pool, requireOrg(ctx), clamp(req.limit, 20, 100));
  return { conversations: rows.map(convs.toPublicConversation) };
}

/** GET /api/public/conversations/:id/messages: newest first, limit 50 by default, 200 at most. */
export async function conversationMessages(deps: Deps, ctx: CallContext, req: { conversationId: string; limit?: number }) {
  const orgId = requireOrg(ctx);
  const conv = isUuid(req.conversationId) ? await convs.findById(deps.pool, orgId, req.conversationId, false, viewerOf(ctx)) : undefined;
  if (!conv) throw notFound('Conversation');
  const { rows, files } = await messages.page(deps.pool, orgId, conv.id, clamp(req.limit, 50, 200), 0);
  return { messages: rows.map((m) => messages.toPublicMessage(m, files.get(m.id) ?? [])) };
}
