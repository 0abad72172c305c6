import { createHmac } from 'node:crypto';
import { generateSecret, parseSecret, secretKey, sign } from './signing';

const problemOf = (secret: string) => {
  const parsed = parseSecret(secret);
  return 'problem' in parsed ? parsed.problem : undefined;
};

describe('webhook secrets: the HMAC key each secret stands for', () => {
  it('a generated secret is whsec_ + base64 of 32 bytes, and its key is those bytes', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secretKey(secret)).toEqual(Buffer.from(secret.slice(6), 'base64'));
    expect(secretKey(secret)!.length).toBe(32);
  });

  it('any whsec_ secret keeps its base64 meaning: 24 to 64 bytes, else refused (never read as text)', () => {
    expect(secretKey(`whsec_${Buffer.alloc(24, 1).toString('base64')}`)).toEqual(Buffer.alloc(24, 1));
    expect(secretKey(`whsec_${Buffer.alloc(64, 2).toString('base64')}`)).toEqual(Buffer.alloc(64, 2));
    expect(problemOf(`whsec_${Buffer.alloc(23).toString('base64')}`)).toMatch(/base64 of 24 to 64 bytes/);
    expect(problemOf(`whsec_${Buffer.alloc(65).toString('base64')}`)).toMatch(/base64 of 24 to 64 bytes/);
    // Long enough to be a typed secret, but the prefix says base64 and this is not base64.
    expect(problemOf('whsec_this is not base64 at all, just words')).toMatch(/^starting with "whsec_"/);
  });

  it('a typed secret of 16 to 128 characters is its UTF-8 bytes', () => {
    expect(secretKey('correct horse battery staple')).toEqual(Buffer.from('correct horse battery staple', 'utf8'));
    expect(secretKey('a'.repeat(16))).toEqual(Buffer.from('a'.repeat(16)));
    expect(secretKey('b'.repeat(128))).toEqual(Buffer.from('b'.repeat(128)));
    // Not base64 even if it looks like it: without the prefix, the characters themselves are the key.
    const b64Looking = Buffer.alloc(32, 5).toString('base64');
    expect(secretKey(b64Looking)).toEqual(Buffer.from(b64Looking, 'utf8'));
  });

  it('counts characters, not bytes or UTF-16 units', () => {
    // 16 Vietnamese letters are 16 characters (over 16 bytes); 128 emoji are 128 characters (256 UTF-16 units).
    const vi = 'mậtkhẩuđặcbiệtxy';
    expect([...vi].length).toBe(16);
    expect(secretKey(vi)).toEqual(Buffer.from(vi, 'utf8'));
    expect(secretKey(vi)!.length).toBeGreaterThan(16);
    expect(secretKey('😀'.repeat(128))!.length).toBe(512);
    expect(problemOf('😀'.repeat(129))).toMatch(/^must be 16 to 128 characters/);
    // 15 characters are refused however many bytes they take.
    expect(problemOf('é'.repeat(15))).toMatch(/^must be 16 to 128 characters/);
  });

  it.each([
    ['15 characters', 'a'.repeat(15), /^must be 16 to 128 characters/],
    ['129 characters', 'a'.repeat(129), /^must be 16 to 128 characters/],
    ['empty', '', /^must be 16 to 128 characters/],
    ['a tab', 'sixteen\tcharacters', /control characters/],
    ['a newline', 'sixteen\ncharacters', /control characters/],
    ['DEL', 'sixteen characters\u007f', /control characters/],
    ['a C1 control', 'sixteen characters\u0085', /control characters/],
    ['a line separator', 'sixteen\u2028characters', /control characters/],
    ['an unpaired surrogate', 'sixteen characters\ud800', /control characters/],
  ])('refuses %s', (_name, secret, problem) => {
    expect(problemOf(secret)).toMatch(problem);
    expect(secretKey(secret)).toBeUndefined();
  });

  it('signs with the key it derived: HMAC-SHA256 over id.timestamp.body, as any receiver computes it', () => {
    const typed = 'Mật khẩu của shop 2025!';
    const expected = createHmac('sha256', Buffer.from(typed, 'utf8')).update('msg_1.1700000000.{"a":1}').digest('base64');
    expect(sign(secretKey(typed)!, 'msg_1', 1700000000, '{"a":1}')).toBe(`v1,${expected}`);
  });
});
