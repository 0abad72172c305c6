import { encodeApiKeyGrant, parseApiKeyGrant, type ApiKeyGrant } from './api-key-grant';

describe('API-key grants as cached in Redis', () => {
  const g: ApiKeyGrant = { orgId: 'o', keyId: 'k', userId: '', role: 'agent', scopes: ['contacts:read', 'events:read'], expiresAt: 0, issuedAt: 1 };

  it('round-trips', () => {
    expect(parseApiKeyGrant(encodeApiKeyGrant(g))).toEqual(g);
  });

  it('anything else is no grant: tombstones, the negative marker, an org id alone, broken JSON', () => {
    for (const raw of ['revoked', 'invalid', '3f6c1e0a-0000-4000-8000-000000000000', '{', '{"orgId":"o"}', null, undefined])
      expect(parseApiKeyGrant(raw)).toBeUndefined();
  });

  it('drops scopes it does not know', () => {
    expect(parseApiKeyGrant(JSON.stringify({ ...g, scopes: ['contacts:read', 'everything'] }))?.scopes).toEqual(['contacts:read']);
  });
});
