import type { PoolClient } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import { ContactRow, toEventContact } from '../db/contacts.repo';

/**
 * Contact events go into the outbox in the transaction of the change, so they are published exactly when
 * the change commits. `contact` is the internal Contact shape without detail arrays (and without friends).
 */
/** A new contact's contact.created, to enqueue (with others: enqueueEvents). */
export function contactCreatedEvent(orgId: string, row: ContactRow) {
  return { type: 'contact.created' as const, orgId, data: { contact: toEventContact(row) } };
}

export function contactUpdated(tx: PoolClient, orgId: string, row: ContactRow, changes: string[]) {
  return enqueueEvent(tx, { type: 'contact.updated', orgId, data: { contact: toEventContact(row), changes } });
}

export function contactDeleted(tx: PoolClient, orgId: string, id: string) {
  return enqueueEvent(tx, { type: 'contact.deleted', orgId, data: { id } });
}
