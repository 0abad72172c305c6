// Sample connector and messaging answers for the mapper tests (not part of the build).
import type { connector, messaging } from '@crm/proto-types';
import { AT, ID, OTHER_ID } from './crm-fixtures';

/** A new account the pool does not hold: no identity, owner, proxy or live state yet. */
export function account(over: Partial<connector.Account__Output> = {}): connector.Account__Output {
  return {
    id: ID,
    displayName: 'Line 1',
    avatarUrl: '',
    phone: '',
    status: 'qr_pending',
    liveStatus: null,
    owner: null,
    hasProxy: false,
    createdAt: AT,
    ...over,
  };
}

/** The same account connected, every optional value set. */
export function connectedAccount(): connector.Account__Output {
  return account({
    chatnetUid: 'uid-1',
    avatarUrl: 'https://cdn.example.com/a.png',
    phone: '+84912345678',
    status: 'connected',
    liveStatus: { state: 'connected', connectedAt: AT, lastHeartbeat: AT },
    ownerUserId: OTHER_ID,
    owner: { id: OTHER_ID, fullName: 'Bob', email: 'bob@example.com' },
    hasProxy: true,
    lastConnectedAt: AT,
  });
}

export function assignment(over: Partial<messaging.AccountAssignment__Output> = {}): messaging.AccountAssignment__Output {
  return { chatnetAccountId: ID, mode: 'manual', userIds: [], onlyOnline: false, drainBacklog: false, ...over };
}
