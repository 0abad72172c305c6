import { randomBase62, sha256Hex } from '@crm/crypto';

// An organization's API key: `crm_live_` and 32 base62 characters (about 190 random bits). The prefix tells a key
// from a bearer token at a glance and lets secret scanners find leaked ones. Only its SHA-256 is stored, with the
// last four characters for the mask; the key itself is shown once, to its creator.

export const API_KEY_PREFIX = 'crm_live_';
const RANDOM_CHARS = 32;
/** Longer than any key we issue with room to spare; a longer value is refused before it is hashed. */
const MAX_LENGTH = 100;

export function newApiKey(): { apiKey: string; keyHash: string; last4: string } {
  const apiKey = API_KEY_PREFIX + randomBase62(RANDOM_CHARS);
  return { apiKey, keyHash: apiKeyHash(apiKey), last4: apiKey.slice(-4) };
}

/** The stored form of a key, and the one it is looked up by. */
export function apiKeyHash(apiKey: string): string {
  return sha256Hex(apiKey);
}

/** Whether a presented value could be one of our keys at all: anything else is refused without a lookup. */
export function mayBeApiKey(value: string): boolean {
  return Boolean(value) && value.startsWith(API_KEY_PREFIX) && value.length <= MAX_LENGTH;
}

/** What the settings page and the audit log show of a key: `crm_live_••••abcd`. */
export function apiKeyMask(last4: string): string {
  return `${API_KEY_PREFIX}••••${last4}`;
}
