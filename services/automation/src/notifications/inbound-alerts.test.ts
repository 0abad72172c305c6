import { previewOf, recipientsOf } from './inbound-alerts';

const U1 = '11111111-1111-4111-8111-111111111111';
const U2 = '22222222-2222-4222-8222-222222222222';

describe('inbound alerts: preview and recipients', () => {
  it('a preview folds whitespace and keeps at most 120 characters, never splitting a character', () => {
    expect(previewOf('  Hello\n\n  there  ', 'text')).toBe('Hello there');
    const long = `${'😀'.repeat(130)}`;
    const p = previewOf(long, 'text');
    expect(Array.from(p)).toHaveLength(120);
    expect(p.endsWith('😀…')).toBe(true);
    expect(previewOf('', 'image')).toBe('[image]');
    expect(previewOf(undefined, undefined)).toBe('');
  });

  it('the assignee alone when there is one; else the listed users, each once; else nobody', () => {
    expect(recipientsOf({ assigneeId: U1, eligibleUserIds: [U2] })).toEqual([U1]);
    expect(recipientsOf({ assigneeId: null, eligibleUserIds: [U1, U2, U1.toUpperCase(), 'not-an-id', 7] })).toEqual([U1, U2]);
    expect(recipientsOf({ assigneeId: null, eligibleUserIds: [] })).toEqual([]);
    expect(recipientsOf({})).toEqual([]);
  });
});
