import type { PoolClient } from '@crm/db';
import type { EventEnvelope } from '@crm/events';

/**
 * crm reacts to other services' events through one consumer per event family: every module that needs an
 * event (activity, lead scoring, analytics) applies it in the same transaction, recorded once in
 * processed_events. One queue per family instead of one per module: a message is read, claimed and committed
 * once, not three times, and its effects appear together or not at all.
 */

/**
 * What a module does with events of a family, in the consumer's transaction: `events` are in delivery
 * order and may span contacts, conversations and orgs; a module ignores the types it does not use. Locks are
 * taken in key order (contacts by org and id first, aggregate rows last), so concurrent batches never deadlock.
 * `traceparent`: the trace of events crm has just made itself (the contact writer's, in the call that made them);
 * without it, each consumed event's own (eventTraceparent). Explicit: the service runs without an active context.
 */
export type FamilyModule = (events: EventEnvelope[], db: PoolClient, traceparent?: string) => Promise<void>;

/** Messages and the conversation events read with them. */
export const MESSAGE_FAMILY = ['message.received', 'message.sent', 'conversation.archived'];

/**
 * Changes to contacts, for the analytics read model (order-tolerant, fed after the fact). Lead scoring takes
 * contact changes and appointments in the writer's own transaction instead (contacts/contact-writer.ts).
 */
export const CONTACT_FAMILY = ['contact.created', 'contact.updated', 'contact.deleted'];

/** The modules one after the other, in the order given (which is the order their locks are taken in). */
export function joinModules(modules: FamilyModule[]): FamilyModule {
  return async (events, db, traceparent) => {
    for (const apply of modules) await apply(events, db, traceparent);
  };
}
