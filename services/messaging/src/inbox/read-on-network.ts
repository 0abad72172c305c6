import { traceFields, type OrgContext } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import type { ConversationRow, NewlyRead } from '../conversations';

/**
 * Read marks one bulk request has in flight to the connector at once: a bulk read of many conversations of one
 * account must not land on its session (and the network) as a burst, nor hold hundreds of calls open.
 */
const BULK_IN_FLIGHT = 4;

export interface ReadOnNetwork {
  conv: Pick<ConversationRow, 'id' | 'chatnet_account_id' | 'thread_id' | 'thread_type'>;
  newly: NewlyRead[];
}

/**
 * Tell the network the account read these messages of one thread (connector MarkThreadSeen, zca sendSeenEvent).
 * Best effort: logged when the connector or the network refuses (not connected, network down); never thrown, so
 * the agent's mark-read, already committed, never fails for it.
 */
export async function markSeenOnNetwork(deps: Deps, ctx: OrgContext, { conv, newly }: ReadOnNetwork): Promise<void> {
  try {
    await deps.remote.markThreadSeen(
      {
        orgId: ctx.orgId,
        userId: ctx.userId,
        role: ctx.role || 'agent',
        requestId: ctx.requestId,
        origin: ctx.origin,
        // The mark-read call's trace, carried explicitly into this work it leaves running (main.ts).
        traceparent: ctx.traceparent,
      },
      {
        accountId: conv.chatnet_account_id,
        threadId: conv.thread_id,
        threadType: conv.thread_type,
        messages: newly.map((m) => ({
          chatnetMessageId: m.chatnetMessageId,
          cliMsgId: m.cliMsgId,
          fromUid: m.fromUid,
          contentType: m.contentType,
          sentAt: m.sentAt.toISOString(),
        })),
      },
    );
  } catch (err) {
    deps.log.warn(
      { err, conversationId: conv.id, ...traceFields(ctx) },
      'marking the conversation read on the chat network failed; it stays read here',
    );
  }
}

/** markSeenOnNetwork for each conversation of a bulk read, a few at a time; resolves when all were tried. */
export async function markManySeenOnNetwork(deps: Deps, ctx: OrgContext, reads: ReadOnNetwork[]): Promise<void> {
  const queue = reads.filter((r) => r.newly.length > 0);
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) await markSeenOnNetwork(deps, ctx, next);
  };
  await Promise.all(Array.from({ length: Math.min(BULK_IN_FLIGHT, queue.length) }, worker));
}
