import type { ApiKeyGrant } from '@crm/auth';
import type { Redis } from '../redis';
import { ApiKeyCache, INVALID } from './api-key-cache';
import { ApiKeyUses } from './api-key-uses';

const grant = (over: Partial<ApiKeyGrant> = {}): ApiKeyGrant => ({
  orgId: 'org-1',
  keyId: 'key-1',
  userId: 'user-1',
  role: 'agent',
  scopes: ['contacts:read'],
  expiresAt: 0,
  issuedAt: 1_000,
  ...over,
});

// The in-process cache of API-key grants: what a revocation or a change of the bound user's access does to it.
describe('ApiKeyCache', () => {
  const cache = () => new ApiKeyCache({} as Redis, 'p:', 100, 60_000, 30_000);

  it('a revoked key is refused at once, and an answer still in flight cannot bring it back', () => {
    const c = cache();
    c.setValid('h1', grant(), 'raw');
    c.drop('h1');
    expect(c.get('h1')).toBe(INVALID);
    c.setValid('h1', grant({ issuedAt: Date.now() + 1 }), 'raw');
    expect(c.get('h1')).toBe(INVALID);
  });

  it('a change of the bound user’s access forgets their keys; answers from before it are stale, later ones are kept', () => {
    const c = cache();
    c.setValid('mine', grant(), 'a');
    c.setValid('other', grant({ userId: 'user-2' }), 'b');
    c.dropUser('user-1', 5_000);
    expect(c.get('mine')).toBeUndefined();
    expect(c.get('other')).toEqual(grant({ userId: 'user-2' }));
    expect(c.isStale('mine', grant({ issuedAt: 4_999 }))).toBe(true);
    c.setValid('mine', grant({ issuedAt: 4_999 }), 'a');
    expect(c.get('mine')).toBeUndefined();
    c.setValid('mine', grant({ issuedAt: 5_001, role: 'team_lead' }), 'c');
    expect(c.get('mine')).toEqual(grant({ issuedAt: 5_001, role: 'team_lead' }));
  });
});

describe('ApiKeyUses', () => {
  it('reports a key’s use to identity at most once a minute', () => {
    const calls: string[] = [];
    const identity = { RecordApiKeyUse: (req: { id: string }) => (calls.push(req.id), Promise.resolve({ ok: true, message: '' })) };
    const uses = new ApiKeyUses(identity as never, { warn: () => undefined } as never);
    uses.used(grant(), 0);
    uses.used(grant(), 59_999);
    uses.used(grant({ keyId: 'key-2' }), 59_999);
    uses.used(grant(), 60_000);
    expect(calls).toEqual(['key-1', 'key-2', 'key-1']);
  });
});
