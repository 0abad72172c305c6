import type { PoolClient } from '@crm/db';
import type { EventEnvelope } from '@crm/events';
import type { Logger } from '@crm/logger';
import type { ContactWriter } from '../contact-writer';
import { FriendListEvent, syncAccountFriends } from '../domain/friends';
import { isUuid } from '../../shared';

/** chatnet_account.friends from the connector → friend records linked to contacts. */
export function chatnetFriendsHandler(log: Logger, contacts: ContactWriter) {
  return async (event: EventEnvelope, db?: PoolClient): Promise<void> => {
    const data = (event.data ?? {}) as FriendListEvent;
    if (!db || !isUuid(event.orgId) || !isUuid(data.accountId) || !Array.isArray(data.friends)) {
      log.warn({ eventId: event.id }, 'chatnet_account.friends without orgId, accountId or friends; ignored');
      return;
    }
    const result = await syncAccountFriends(db, contacts, event.orgId, data);
    log.info({ eventId: event.id, accountId: data.accountId, ...result }, 'account friend list synced');
  };
}
