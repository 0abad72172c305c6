import { escapeLike } from './like';

describe('escapeLike', () => {
  it('escapes LIKE wildcards and the escape character, and leaves other text alone', () => {
    expect(escapeLike('50%')).toBe('50\\%');
    expect(escapeLike('a_b')).toBe('a\\_b');
    expect(escapeLike('C:\\dir')).toBe('C:\\\\dir');
    expect(escapeLike('plain text')).toBe('plain text');
  });
});
