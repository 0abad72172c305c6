import { NoConversationYet, targetOf } from './batch-conversations';

describe('what a campaign turn learnt of its batch’s conversations', () => {
  it('a contact said to have none stands in for its own lookup once, and only while the answer is fresh', () => {
    const none = new NoConversationYet(5_000);
    none.remember(['a', 'b'], 1_000);
    expect(none.take('a', 6_000)).toBe(true);
    // Taken: a deferred recipient that comes round again asks anew.
    expect(none.take('a', 6_000)).toBe(false);
    expect(none.take('b', 6_001)).toBe(false);
    expect(none.take('c', 1_000)).toBe(false);
  });

  it('a conversation’s account that is not a UUID is no account', () => {
    const id = '6f1c1a52-3f7e-4c55-9a43-0d1f3f0b7c11';
    expect(targetOf({ conversationId: 'conv', chatnetAccountId: id })).toEqual({ conversationId: 'conv', accountId: id });
    expect(targetOf({ conversationId: 'conv', chatnetAccountId: '' })).toEqual({ conversationId: 'conv', accountId: null });
    expect(targetOf({ conversationId: 'conv', chatnetAccountId: 'acct-1' })).toEqual({ conversationId: 'conv', accountId: null });
  });
});
