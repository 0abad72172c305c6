import { createHash } from 'node:crypto';
import { API_KEY_PREFIX, apiKeyHash, apiKeyMask, mayBeApiKey, newApiKey } from './api-key-format';

// An organization's API key (POST /settings/api-key/generate, the X-API-Key of /api/public).
describe('API keys', () => {
  it('a key is crm_live_ and 32 base62 characters, different every time', () => {
    const keys = Array.from({ length: 50 }, () => newApiKey().apiKey);
    for (const key of keys) expect(key).toMatch(/^crm_live_[0-9A-Za-z]{32}$/);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('what is stored is its SHA-256 and its last four characters, never the key', () => {
    const { apiKey, keyHash, last4 } = newApiKey();
    expect(keyHash).toBe(createHash('sha256').update(apiKey).digest('hex'));
    expect(apiKeyHash(apiKey)).toBe(keyHash);
    expect(last4).toBe(apiKey.slice(-4));
    expect(keyHash).not.toContain(apiKey.slice(API_KEY_PREFIX.length));
  });

  it('the mask shows the prefix and the last four characters only', () => {
    const { apiKey, last4 } = newApiKey();
    expect(apiKeyMask(last4)).toBe(`crm_live_••••${apiKey.slice(-4)}`);
    expect(apiKeyMask(last4)).not.toContain(apiKey.slice(API_KEY_PREFIX.length, -4));
  });

  describe('mayBeApiKey: refused without a lookup', () => {
    it('a key we issued passes', () => {
      expect(mayBeApiKey(newApiKey().apiKey)).toBe(true);
    });

    it('nothing, another prefix (a test key, a bearer token) or no prefix is refused', () => {
      expect(mayBeApiKey('')).toBe(false);
      expect(mayBeApiKey('crm_test_' + 'a'.repeat(32))).toBe(false);
      expect(mayBeApiKey('eyJhbGciOiJSUzI1NiJ9.e30.sig')).toBe(false);
      expect(mayBeApiKey('a'.repeat(32) + 'crm_live_')).toBe(false);
    });

    it('a value over 100 characters is refused; 100 is the most accepted', () => {
      expect(mayBeApiKey(API_KEY_PREFIX + 'a'.repeat(100 - API_KEY_PREFIX.length))).toBe(true);
      expect(mayBeApiKey(API_KEY_PREFIX + 'a'.repeat(101 - API_KEY_PREFIX.length))).toBe(false);
    });
  });
});
