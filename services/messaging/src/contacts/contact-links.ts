import type { PoolClient } from '@crm/db';
import { eventTraceFields, eventTraceparent, isEventOf, type EventEnvelope } from '@crm/events';
import type { Deps } from '../deps';
import { convs, messages } from '../conversations';
import { resolveSender, upsertContact, type LinkedContact } from './contacts';

/** crm's answers for a batch of messaging.contact_link requests, by event id. */
export type ContactLinks = Map<string, { senderContactId: string } | { contact: LinkedContact }>;

/**
 * Asks crm, before the consumer's transaction opens, for every link the batch requests (issue #28 item 4): a group
 * sender's contact, or the contact of a conversation still without one (one already linked, a group, or gone asks
 * nothing). crm unreachable: this throws, and the requests are retried with backoff as before. Each is asked under the
 * origin it carries (the stamp of the message, or the origin of the send, that asked for it): this is messaging's own
 * event, so its own stamp would vouch for nothing (README, "Trust model").
 */
export async function prepareContactLinks(deps: Deps, events: EventEnvelope[]): Promise<ContactLinks> {
  const links: ContactLinks = new Map();
  await Promise.all(
    events.map(async (event) => {
      if (!isEventOf(event, 'messaging.contact_link')) return;
      const d = event.data;
      // In the event's trace (the consumer span's), explicit: the service runs without an active context (main.ts).
      const traceparent = eventTraceparent(event);
      if (d.sender) {
        links.set(event.id, { senderContactId: await resolveSender(deps, event.orgId, d, d.origin, traceparent) });
        return;
      }
      const conv = await convs.findById(deps.pool, event.orgId, d.conversationId);
      // A group is never a contact (issue #15): a request from before that change links nothing.
      if (!conv || conv.contact_id || conv.thread_type === 'group') return;
      links.set(event.id, { contact: await upsertContact(deps, event.orgId, d, d.origin, traceparent) });
    }),
  );
  return links;
}

/** Applies what crm answered, inside the consumer's transaction. */
export async function applyContactLink(deps: Deps, db: PoolClient, event: EventEnvelope, links: ContactLinks): Promise<void> {
  if (!isEventOf(event, 'messaging.contact_link')) return;
  const link = links.get(event.id);
  if (!link) return;
  const d = event.data;
  const conv = await convs.findById(db, event.orgId, d.conversationId);
  if (!conv) return;
  if ('senderContactId' in link) {
    const linked = await messages.linkSender(db, event.orgId, conv.id, d.chatnetUid, link.senderContactId);
    deps.log.info(
      { conversationId: conv.id, contactId: link.senderContactId, linked, ...eventTraceFields(event) },
      'group messages linked to their sender',
    );
    return;
  }
  if (conv.contact_id || conv.thread_type === 'group') return;
  await convs.linkContact(db, event.orgId, conv.id, link.contact);
  deps.log.info({ conversationId: conv.id, contactId: link.contact.id, ...eventTraceFields(event) }, 'conversation linked to its contact');
}
