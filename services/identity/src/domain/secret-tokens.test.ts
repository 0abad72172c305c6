import { createHash } from 'node:crypto';
import { newSecretToken, secretTokenHash } from './secret-tokens';

// Refresh tokens and invitation tokens: bearer secrets stored only as their hash.
describe('secret tokens', () => {
  it('are 256 random bits in base64url (43 characters, safe in a URL), different every time', () => {
    const tokens = Array.from({ length: 50 }, () => newSecretToken().token);
    for (const token of tokens) {
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    }
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it('what is stored is the SHA-256 of the token, which a presented token is looked up by', () => {
    const { token, hash } = newSecretToken();
    expect(hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(secretTokenHash(token)).toBe(hash);
    expect(hash).not.toContain(token);
  });

  it('a token differing in one character has another hash', () => {
    const { token, hash } = newSecretToken();
    const other = (token[0] === 'A' ? 'B' : 'A') + token.slice(1);
    expect(secretTokenHash(other)).not.toBe(hash);
  });
});
