import type { PoolClient } from '@crm/db';
import { isEventOf, type EventEnvelope } from '@crm/events';
import type { Logger } from '@crm/logger';
import type { ContactWriter } from '../contact-writer';
import { syncAccountFriends } from '../domain/friends';
import { isUuid } from '../../shared';

/** chatnet_account.friends from the connector → friend records linked to contacts (data parsed by its schema: parseData). */
export function chatnetFriendsHandler(log: Logger, contacts: ContactWriter) {
  return async (event: EventEnvelope, db: PoolClient): Promise<void> => {
    if (!isEventOf(event, 'chatnet_account.friends')) return;
    const { data } = event;
    if (!isUuid(event.orgId)) {
      log.warn({ eventId: event.id }, 'chatnet_account.friends without orgId; ignored');
      return;
    }
    const result = await syncAccountFriends(db, contacts, event.orgId, data);
    log.info({ eventId: event.id, accountId: data.accountId, ...result }, 'account friend list synced');
  };
}
