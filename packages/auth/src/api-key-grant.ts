/**
 * What an API key may do, as identity grants it and the gateway enforces it. Shared by both so the list of scopes
 * and the shape of a cached grant cannot drift apart.
 */

/** Every scope a named key can hold; the organization's own key (settings/api-key) holds them all. */
export const API_KEY_SCOPES = [
  'contacts:read',
  'contacts:write',
  'conversations:read',
  'messages:send',
  'appointments:read',
  'appointments:write',
  'events:read',
  'webhooks:manage',
] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

export function isApiKeyScope(value: string): value is ApiKeyScope {
  return (API_KEY_SCOPES as readonly string[]).includes(value);
}

/** What each scope allows, for the API documentation and the settings page. */
export const API_KEY_SCOPE_DESCRIPTIONS: Record<ApiKeyScope, string> = {
  'contacts:read': 'read contacts',
  'contacts:write': 'create and update contacts',
  'conversations:read': 'read conversations and their messages',
  'messages:send': 'send messages and start conversations',
  'appointments:read': 'read appointments',
  'appointments:write': 'create appointments',
  'events:read': 'read the event feed',
  'webhooks:manage': 'manage webhook endpoints and replays',
};

/**
 * A verified key, as identity writes it at `apikey:<sha256>` in Redis (identity alone writes there: deploy/redis
 * acl.sh gives the gateway read access only) and as the gateway keeps it in memory.
 */
export interface ApiKeyGrant {
  orgId: string;
  keyId: string;
  /** The user the key acts as ('' for a key bound to no user: it acts with an agent's rights over the whole org). */
  userId: string;
  /** The bound user's role when identity answered; 'agent' for a key with no user. */
  role: string;
  scopes: ApiKeyScope[];
  /** Epoch ms after which the key is refused; 0 when it never expires. */
  expiresAt: number;
  /** Epoch ms of identity's answer: a user-bound grant from before the user's access changed is stale. */
  issuedAt: number;
}

export function encodeApiKeyGrant(g: ApiKeyGrant): string {
  return JSON.stringify(g);
}

/** The grant, or undefined for anything else (a tombstone, the negative-cache marker, an older format). */
export function parseApiKeyGrant(raw: string | null | undefined): ApiKeyGrant | undefined {
  if (!raw || raw[0] !== '{') return undefined;
  try {
    const g = JSON.parse(raw) as Partial<ApiKeyGrant>;
    if (typeof g.orgId !== 'string' || !g.orgId || typeof g.keyId !== 'string' || !g.keyId) return undefined;
    if (typeof g.userId !== 'string' || typeof g.role !== 'string' || !Array.isArray(g.scopes)) return undefined;
    if (typeof g.expiresAt !== 'number' || typeof g.issuedAt !== 'number') return undefined;
    return { ...(g as ApiKeyGrant), scopes: g.scopes.filter((s): s is ApiKeyScope => typeof s === 'string' && isApiKeyScope(s)) };
  } catch {
    return undefined;
  }
}
