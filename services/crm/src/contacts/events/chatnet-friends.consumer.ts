import type { PoolClient } from '@crm/db';
import { eventTraceFields, eventTraceparent, isEventOf, type EventEnvelope } from '@crm/events';
import type { Logger } from '@crm/logger';
import type { ContactWriters } from '../contact-writer';
import { syncAccountFriends } from '../domain/friends';
import { isUuid } from '../../shared';

/**
 * chatnet_account.friends from the connector → friend records linked to contacts (data parsed by its schema: parseData).
 * The contacts it creates, and the lines it logs, carry the event's trace, passed explicitly (no active context).
 */
export function chatnetFriendsHandler(log: Logger, contacts: ContactWriters) {
  return async (event: EventEnvelope, db: PoolClient): Promise<void> => {
    if (!isEventOf(event, 'chatnet_account.friends')) return;
    const { data } = event;
    if (!isUuid(event.orgId)) {
      log.warn({ eventId: event.id, ...eventTraceFields(event) }, 'chatnet_account.friends without orgId; ignored');
      return;
    }
    const result = await syncAccountFriends(db, contacts.inTrace(eventTraceparent(event)), event.orgId, data);
    log.info({ eventId: event.id, accountId: data.accountId, ...result, ...eventTraceFields(event) }, 'account friend list synced');
  };
}
