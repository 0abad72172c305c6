import { SenderContacts } from './sender-contacts';

describe('SenderContacts', () => {
  it('remembers a sender per org and uid for ttlMs, forgets a deleted contact of that org only, keeps at most maxEntries', () => {
    let now = 0;
    const cache = new SenderContacts(1_000, 2, () => now);
    cache.set('org-a', 'uid-1', 'contact-1');
    cache.set('org-b', 'uid-1', 'contact-1');
    expect(cache.get('org-a', 'uid-1')).toBe('contact-1');
    expect(cache.get('org-a', 'uid-2')).toBeUndefined();

    cache.forgetContact('org-a', 'contact-1');
    expect(cache.get('org-a', 'uid-1')).toBeUndefined();
    expect(cache.get('org-b', 'uid-1')).toBe('contact-1');

    now = 1_001;
    expect(cache.get('org-b', 'uid-1')).toBeUndefined();

    cache.set('org-a', 'uid-1', 'c1');
    cache.set('org-a', 'uid-2', 'c2');
    cache.set('org-a', 'uid-3', 'c3');
    expect([cache.get('org-a', 'uid-1'), cache.get('org-a', 'uid-2'), cache.get('org-a', 'uid-3')]).toEqual([undefined, 'c2', 'c3']);
  });
});
