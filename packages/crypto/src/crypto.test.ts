import { createCipheriv, randomBytes } from 'node:crypto';
import { maskSecret, randomBase62, SecretBox } from './index';

describe('SecretBox', () => {
  it('still reads values written before key ids (v<version>:), by the place of the key', () => {
    const legacyKey = Buffer.from(key, 'base64');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', legacyKey, iv);
    cipher.setAAD(Buffer.from('aad'));
    const body = Buffer.concat([cipher.update('old value', 'utf8'), cipher.final()]);
    const stored = `v1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
    const box = SecretBox.fromEnv(key);
    expect(box.decrypt(stored, 'aad')).toBe('old value');
    expect(box.needsRotation(stored)).toBe(true);
  });

  const key = randomBytes(32).toString('base64');

  it('round-trips, with a fresh IV each time', () => {
    const box = SecretBox.fromEnv(key);
    const a = box.encrypt('sk-secret', 'org1:row1');
    const b = box.encrypt('sk-secret', 'org1:row1');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^k[0-9a-f]{8}:/);
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
    expect(rotated.needsRotation(rotated.encrypt('new', 'aad'))).toBe(false);
    expect(rotated.needsRotation(c)).toBe(true);
  });

  it('refuses a value whose authentication tag was cut short (GCM alone accepts a 4-byte tag)', () => {
    const box = SecretBox.fromEnv(key);
    const written = box.encrypt('', 'aad');
    const prefix = written.slice(0, 10);
    const raw = Buffer.from(written.slice(10), 'base64');
    // iv | the first 4 bytes of the tag: with short tags allowed a forger needs 2^32 tries, not 2^128.
    const short = `${prefix}${raw.subarray(0, 16).toString('base64')}`;
    expect(() => box.decrypt(short, 'aad')).toThrow('Encrypted value too short');
    expect(box.decrypt(`${prefix}${raw.toString('base64')}`, 'aad')).toBe('');
  });

  it('tells which values an old key encrypted, and re-encrypts them under the current one', () => {
    const oldBox = SecretBox.fromEnv(key);
    const c = oldBox.encrypt('kept', 'aad');
    const newKey = randomBytes(32).toString('base64');
    const rotating = SecretBox.fromEnv(newKey, `1:${key}`);
    expect(rotating.needsRotation(c)).toBe(true);
    const again = rotating.reencrypt(c, 'aad');
    expect(rotating.needsRotation(again)).toBe(false);
    // The old key can go: the new one alone reads it, whatever place it then has in the configuration.
    expect(SecretBox.fromEnv(newKey).decrypt(again, 'aad')).toBe('kept');
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
