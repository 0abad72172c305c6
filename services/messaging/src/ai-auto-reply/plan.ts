import { randomUUID } from 'node:crypto';
import type { Queryable } from '@crm/db';
import type { Deps } from '../deps';
import { queue } from './replies.repo';

/** A customer's message just stored by the inbound batch. */
export interface ReceivedForAssistant {
  orgId: string;
  conversationId: string;
  chatnetAccountId: string;
  threadType: string;
  messageId?: string;
  /** The verified stamp of the message's inbound event (eventOrigin): ai is asked under it. */
  origin?: string;
}

/**
 * The messages of the batch the assistant should look at (issue #32 item 5), queued in the batch's transaction as due
 * rows that the AutoReplyWorker handles after commit: one-to-one conversations on accounts in an org's auto-reply list.
 * Nothing else happens here (no query at all when no message qualifies); what ai decides, business hours and the
 * reply limit are looked at by the worker, outside the inbound path.
 */
export async function planAutoReplies(deps: Deps, db: Queryable, received: ReceivedForAssistant[]): Promise<void> {
  const items = received
    .filter((r) => r.messageId && r.threadType === 'user' && deps.autoReplyAccounts.has(r.orgId, r.chatnetAccountId))
    .map((r) => ({ id: randomUUID(), orgId: r.orgId, conversationId: r.conversationId, messageId: r.messageId!, origin: r.origin ?? null }));
  await queue(db, items);
}
