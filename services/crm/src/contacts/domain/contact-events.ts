import type { PoolClient } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import { ContactRow, toEventContact } from '../db/contacts.repo';

/**
 * Contact events go into the outbox in the transaction of the change, so they are published exactly when
 * the change commits. `contact` is the internal Contact shape without detail arrays (and without friends).
 * `traceparent` is the trace each continues (the call's or the consumed event's; none for a timer's work), given
 * explicitly: the service runs without an active context (main.ts).
 */
/** A new contact's contact.created, to enqueue (with others: enqueueEvents). */
export function contactCreatedEvent(orgId: string, row: ContactRow, traceparent: string | undefined) {
  return { type: 'contact.created' as const, orgId, data: { contact: toEventContact(row) }, traceparent };
}

export function contactUpdated(tx: PoolClient, orgId: string, row: ContactRow, changes: string[], traceparent: string | undefined) {
  return enqueueEvent(tx, { type: 'contact.updated', orgId, data: { contact: toEventContact(row), changes }, traceparent });
}

export function contactDeleted(tx: PoolClient, orgId: string, id: string, traceparent: string | undefined) {
  return enqueueEvent(tx, { type: 'contact.deleted', orgId, data: { id }, traceparent });
}
