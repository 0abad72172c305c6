import { randomUUID } from 'node:crypto';
import type { PoolClient } from '@crm/db';
import { enqueueEvent, eventOrigin, eventTraceFields, eventTraceparent, type EventEnvelope } from '@crm/events';
import type { Deps } from '../deps';
import { files } from '../attachments';
import { convs, messages, type InboundData } from '../conversations';
import { openConversation, threadTarget, type ContactTarget, type LinkedContact } from '../contacts';
import { quotedIdOf } from '../reactions';
import { messageSentEvent } from '../send';

/** What the network calls a message the account wrote elsewhere than through the CRM (its phone): `source`. */
export const PHONE_SOURCE = 'phone';

/**
 * What storeSelf asks of the batch it is stored in (inbound.ts's InboundBatch): a new thread's contact, asked from
 * crm before the transaction. Declared here, not imported from inbound.ts, which imports this file.
 */
export interface ThreadContacts {
  /** `traceparent`: the trace of the message that asks, for crm's call when it is made from here. */
  contact(orgId: string, t: ContactTarget, traceparent: string | undefined): Promise<LinkedContact | undefined>;
}

/**
 * A message the account wrote itself on another device (chatnet.inbound with fromSelf), inside the inbound
 * consumer's transaction: stored as outbound in the thread's conversation (made, as for a first send from the CRM,
 * when there is none), written by no user of the CRM. Stored once per (account, network id): the echo of a message
 * the CRM sent (or a redelivery) stores and publishes nothing. It answers the contact like any reply, and announces
 * `message.sent` (source `phone`, no sentByUserId): never `message.received`, so no alert or "message received"
 * automation fires for it. What it enqueues continues the event's trace (eventTraceparent, explicit: main.ts).
 */
export async function storeSelf(deps: Deps, db: PoolClient, event: EventEnvelope, d: InboundData, batch: ThreadContacts): Promise<void> {
  const orgId = event.orgId;
  const traceparent = eventTraceparent(event);
  let conv = await convs.findByThread(db, orgId, d.accountId, d.threadType, d.threadId);
  if (!conv) {
    const t = threadTarget(d);
    const contact = t ? await batch.contact(orgId, t, traceparent) : undefined;
    // No groupName: a group's conversation first opened by the account's own message keeps the fallback name until a
    // received message renames it (as before openConversation was shared; the received path passes the group's name).
    conv = (
      await openConversation(db, orgId, {
        accountId: d.accountId,
        threadType: d.threadType,
        threadId: d.threadId,
        target: t,
        contact,
        origin: eventOrigin(event),
        traceparent,
      })
    ).row;
  }
  const row = await messages.insertOutbound(db, {
    id: randomUUID(),
    orgId,
    conversationId: conv.id,
    accountId: d.accountId,
    chatnetMessageId: d.chatnetMessageId,
    content: d.content,
    contentType: d.contentType,
    senderName: d.fromName,
    source: PHONE_SOURCE,
    sentByUserId: null,
    clientMessageId: null,
    sentAt: d.sentAt,
    quoteMessageId: await quotedIdOf(db, orgId, conv.id, d.quoteChatnetMessageId),
  });
  if (!row) {
    deps.log.debug(
      { chatnetMessageId: d.chatnetMessageId, accountId: d.accountId, ...eventTraceFields(event) },
      "the account's own message is stored already (sent from the CRM, or redelivered); skipped",
    );
    return;
  }
  await convs.applyOutbound(db, conv.id, {
    id: row.id,
    sentAt: row.sent_at,
    content: row.content,
    contentType: row.content_type,
    senderName: row.sender_name,
  });
  if (d.attachmentIds.length) await files.linkToMessage(db, orgId, row.id, d.attachmentIds);
  await enqueueEvent(db, { ...messageSentEvent(orgId, conv, row, { sentByUserId: null, source: PHONE_SOURCE }), traceparent });
}
