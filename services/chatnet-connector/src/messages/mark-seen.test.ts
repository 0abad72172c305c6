import { markSeenOf } from './mark-seen';

// MarkThreadSeen's checks (messaging's call, and again on the holder for a forwarded one): what the network needs
// of each message, at most zca-js's 50, errors naming the field.
describe('markSeenOf', () => {
  const msg = (i = 0) => ({ chatnetMessageId: `m${i}`, cliMsgId: `c${i}`, fromUid: 'u1', contentType: '', sentAt: '2026-01-01T00:00:00.000Z' });
  const fieldOf = (req: object) => {
    try {
      markSeenOf({ accountId: 'a', threadId: 't', threadType: 'user', messages: [msg()], ...req });
    } catch (err) {
      return (err as { details?: { errors?: Array<{ field: string }> } }).details?.errors?.[0]?.field ?? (err as Error).message;
    }
    return 'ok';
  };

  it('normalises a valid call: user thread by default, text by default, dates parsed', () => {
    expect(markSeenOf({ accountId: 'a', threadId: ' t1 ', threadType: '', messages: [msg(1)] })).toEqual({
      threadId: 't1',
      threadType: 'user',
      messages: [{ chatnetMessageId: 'm1', cliMsgId: 'c1', fromUid: 'u1', contentType: 'text', sentAt: new Date('2026-01-01T00:00:00.000Z') }],
    });
  });

  it('refuses what the network could not take, naming the field', () => {
    expect(fieldOf({})).toBe('ok');
    expect(fieldOf({ threadId: '' })).toMatch(/threadId/);
    expect(fieldOf({ threadType: 'channel' })).toMatch(/threadType/);
    expect(fieldOf({ messages: [] })).toMatch(/messages/);
    expect(fieldOf({ messages: Array.from({ length: 51 }, (_, i) => msg(i)) })).toMatch(/messages/);
    expect(fieldOf({ messages: [{ ...msg(), cliMsgId: '' }] })).toMatch(/messages\.0\.cliMsgId/);
    expect(fieldOf({ messages: [msg(), { ...msg(1), chatnetMessageId: ' ' }] })).toMatch(/messages\.1\.chatnetMessageId/);
    expect(fieldOf({ messages: [{ ...msg(), sentAt: 'yesterday' }] })).toMatch(/messages\.0\.sentAt/);
  });
});
