import { denySeconds, judgeRefresh, refreshExpiresAt } from './refresh-tokens';

// POST /auth/refresh: rotation within a family, replay detection, expiry.
describe('refresh tokens', () => {
  const now = Date.parse('2026-03-01T12:00:00.000Z');
  const token = (over: { revoked_at?: Date | null; expires_at?: Date } = {}) => ({
    id: 'tok-1',
    family_id: 'fam-1',
    user_id: 'user-1',
    expires_at: refreshExpiresAt(now, 30),
    revoked_at: null,
    ...over,
  });

  it('a token lives REFRESH_TOKEN_TTL_DAYS from its issue', () => {
    expect(refreshExpiresAt(now, 30).toISOString()).toBe('2026-03-31T12:00:00.000Z');
    expect(refreshExpiresAt(now, 1).toISOString()).toBe('2026-03-02T12:00:00.000Z');
  });

  describe('judgeRefresh', () => {
    it('a live token rotates: it is spent and the next one joins the same family', () => {
      expect(judgeRefresh(token(), now)).toEqual({ kind: 'rotate', tokenId: 'tok-1', familyId: 'fam-1', userId: 'user-1' });
    });

    it('a spent token presented again is a replay of its family', () => {
      expect(judgeRefresh(token({ revoked_at: new Date(now - 1000) }), now)).toEqual({ kind: 'reused', familyId: 'fam-1', userId: 'user-1' });
    });

    it('a spent token is a replay even after it has expired: the family is still revoked', () => {
      const spentAndExpired = token({ revoked_at: new Date(now - 2000), expires_at: new Date(now - 1000) });
      expect(judgeRefresh(spentAndExpired, now).kind).toBe('reused');
    });

    it('an unspent token works until its expiry, the instant itself included, and is only invalid after', () => {
      const expiresAt = new Date(now);
      expect(judgeRefresh(token({ expires_at: expiresAt }), now).kind).toBe('rotate');
      expect(judgeRefresh(token({ expires_at: expiresAt }), now + 1)).toEqual({ kind: 'invalid' });
    });

    it('a token that matches no row is invalid', () => {
      expect(judgeRefresh(undefined, now)).toEqual({ kind: 'invalid' });
    });
  });

  describe('denySeconds: how long a revoked access token stays deny-listed', () => {
    it('until it would have expired, rounded up so it is never free a moment early', () => {
      expect(denySeconds(now / 1000 + 900, now)).toBe(900);
      expect(denySeconds(now / 1000 + 10, now + 200)).toBe(10);
    });

    it('zero or less for a token that has expired already (no entry needed)', () => {
      expect(denySeconds(now / 1000, now)).toBe(0);
      expect(denySeconds(now / 1000 - 5, now)).toBeLessThan(0);
    });
  });
});
