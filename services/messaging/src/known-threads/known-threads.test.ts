import { KnownThreads } from './known-threads';

const thread = (threadId: string, orgId = 'org-a') => ({ orgId, accountId: 'acc-1', threadType: 'user', threadId });

describe('KnownThreads', () => {
  it('remembers a thread by org, account, type and id, and forgets the first remembered beyond maxEntries', () => {
    const known = new KnownThreads(2);
    known.add(thread('t1'));
    expect(known.has(thread('t1'))).toBe(true);
    expect(known.has(thread('t1', 'org-b'))).toBe(false);
    expect(known.has({ ...thread('t1'), threadType: 'group' })).toBe(false);
    expect(known.has(thread('t2'))).toBe(false);

    known.add(thread('t2'));
    known.add(thread('t1'));
    known.add(thread('t3'));
    expect([known.has(thread('t1')), known.has(thread('t2')), known.has(thread('t3'))]).toEqual([false, true, true]);
  });
});
