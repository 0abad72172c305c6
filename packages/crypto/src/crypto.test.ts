import { randomBytes } from 'node:crypto';
import { maskSecret, randomBase62, SecretBox } from './index';

describe('SecretBox', () => {
  const key = randomBytes(32).toString('base64');

  it('round-trips, with a fresh IV each time', () => {
    const box = SecretBox.fromEnv(key);
    const a = box.encrypt('sk-secret', 'org1:row1');
    const b = box.encrypt('sk-secret', 'org1:row1');
    expect(a).not.toBe(b);
    expect(a.startsWith('v1:')).toBe(true);
    expect(box.decrypt(a, 'org1:row1')).toBe('sk-secret');
  });

  it('refuses a ciphertext moved to another row or org (AAD) or tampered with', () => {
    const box = SecretBox.fromEnv(key);
    const c = box.encrypt('sk-secret', 'org1:row1');
    expect(() => box.decrypt(c, 'org2:row1')).toThrow();
    const tampered = c.slice(0, -4) + (c.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    expect(() => box.decrypt(tampered, 'org1:row1')).toThrow();
  });

  it('decrypts values written under an old key after rotation', () => {
    const oldBox = SecretBox.fromEnv(key);
    const c = oldBox.encrypt('kept', 'aad');
    const rotated = SecretBox.fromEnv(randomBytes(32).toString('base64'), `1:${key}`);
    expect(rotated.decrypt(c, 'aad')).toBe('kept');
    expect(rotated.encrypt('new', 'aad').startsWith('v2:')).toBe(true);
  });
});

describe('randomBase62 and maskSecret', () => {
  it('makes base62 strings of the asked length', () => {
    const s = randomBase62(32);
    expect(s).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(randomBase62(32)).not.toBe(s);
  });
  it('masks all but the last four characters', () => {
    expect(maskSecret('crm_live_abcdefgh1234', 'crm_live_')).toBe('crm_live_••••1234');
    expect(maskSecret('')).toBe('');
  });
});
