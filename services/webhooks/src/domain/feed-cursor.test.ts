import { decodeCursor, encodeCursor } from './feed-cursor';

describe('feed cursor', () => {
  it('round-trips a position and a time', () => {
    const c = { position: 9_007_199_254_740_993n, at: new Date('2026-12-03T10:00:00.123Z') };
    expect(decodeCursor(encodeCursor(c))).toEqual(c);
  });

  it('refuses what it did not make', () => {
    for (const raw of ['', 'abc', '!!', Buffer.from('1:-1:5').toString('base64url'), Buffer.from('2:1:5').toString('base64url'), 'x'.repeat(65)]) {
      expect(decodeCursor(raw)).toBeUndefined();
    }
    expect(decodeCursor(Buffer.from(`1:${2n ** 63n}:5`).toString('base64url'))).toBeUndefined();
  });
});
