import type { PoolClient } from '@crm/db';
import { enqueueEvent, eventTraceFields, eventTraceparent, type ParsedEvent } from '@crm/events';
import type { Deps } from '../deps';
import { convs, messages } from '../conversations';
import { recalledEvent } from './recall';
import { emojiOf, reactionEvent } from './react';
import { deleteReaction, reactionOf, upsertReaction } from './reactions.repo';

/** The message a piece of network news names, in its thread's conversation; undefined when this CRM never stored it. */
async function named(
  db: PoolClient,
  orgId: string,
  d: { accountId: string; threadType: 'user' | 'group'; threadId: string; chatnetMessageId: string },
) {
  if (!d.threadId || !d.chatnetMessageId) return undefined;
  const conv = await convs.findByThread(db, orgId, d.accountId, d.threadType, d.threadId.slice(0, 200));
  const row = conv ? await messages.findInConversationByNetworkId(db, orgId, conv.id, d.chatnetMessageId.slice(0, 200)) : undefined;
  return conv && row ? { conv, row } : undefined;
}

/**
 * chatnet.recalled, inside the consumer's transaction: the sender took a message back on the network. The stored
 * message is marked recalled (content kept for team leads and above) and `message.recalled` published, once.
 * The contact recalls their own messages; the account's own message recalled from its phone counts as the agent's.
 */
export async function recordRecall(deps: Deps, db: PoolClient, event: ParsedEvent<'chatnet.recalled'>): Promise<void> {
  const d = event.data;
  const found = await named(db, event.orgId, d);
  if (!found) {
    deps.log.info(
      { eventId: event.id, chatnetMessageId: d.chatnetMessageId, ...eventTraceFields(event) },
      'recall of a message not stored here; ignored',
    );
    return;
  }
  const by = found.row.direction === 'inbound' ? 'contact' : 'agent';
  const at = new Date(d.recalledAt);
  const done = await messages.markRecalled(
    db,
    event.orgId,
    found.row.id,
    by,
    Number.isNaN(at.getTime()) || at.getTime() > Date.now() ? new Date() : at,
  );
  if (!done) return;
  // The inbox list previews the last message from the conversation row, for every role alike: a contact's words they
  // took back leave the preview (agents may no longer read them; the message itself keeps them for team leads).
  if (by === 'contact') await convs.clearLastMessagePreview(db, event.orgId, found.conv.id, found.row.id);
  await enqueueEvent(db, {
    ...recalledEvent(found.conv, done, by === 'contact' ? { by, fromUid: d.fromUid } : { by, userId: null }),
    traceparent: eventTraceparent(event),
  });
}

/**
 * chatnet.reaction, inside the consumer's transaction: a member of the thread set a reaction on a message (one per
 * member, replacing theirs) or took it back (empty emoji). `message.reaction` is published when something changed.
 */
export async function recordReaction(deps: Deps, db: PoolClient, event: ParsedEvent<'chatnet.reaction'>): Promise<void> {
  const d = event.data;
  const found = await named(db, event.orgId, d);
  const fromUid = d.fromUid.slice(0, 200);
  if (!found || !fromUid) {
    deps.log.info(
      { eventId: event.id, chatnetMessageId: d.chatnetMessageId, ...eventTraceFields(event) },
      'reaction on a message not stored here; ignored',
    );
    return;
  }
  const orgId = event.orgId;
  const { conv, row } = found;
  const at = new Date();
  const traceparent = eventTraceparent(event);
  if (!d.emoji) {
    if (await deleteReaction(db, orgId, row.id, 'contact', fromUid)) {
      await enqueueEvent(db, { ...reactionEvent(conv, row, { emoji: null, at, by: 'contact', fromUid }), traceparent });
    }
    return;
  }
  let emoji: string;
  try {
    emoji = emojiOf(d.emoji);
  } catch {
    deps.log.warn({ eventId: event.id, ...eventTraceFields(event) }, 'a reaction from the network that is no emoji; ignored');
    return;
  }
  if ((await reactionOf(db, orgId, row.id, 'contact', fromUid)) === emoji) return;
  await upsertReaction(db, { orgId, messageId: row.id, by: 'contact', userId: fromUid, emoji, at });
  await enqueueEvent(db, { ...reactionEvent(conv, row, { emoji, at, by: 'contact', fromUid }), traceparent });
}
