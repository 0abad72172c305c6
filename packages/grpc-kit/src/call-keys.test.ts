import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { callKey, rawX25519, x25519PrivateOf, x25519PublicOf } from './call-keys';

describe('pairwise call keys', () => {
  it('converts an Ed25519 key pair to the X25519 pair of the same scalar', () => {
    for (let i = 0; i < 20; i++) {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      expect(rawX25519(x25519PublicOf(publicKey)).toString('hex')).toBe(rawX25519(createPublicKey(x25519PrivateOf(privateKey))).toString('hex'));
    }
  });

  it('gives caller and callee the same key, one per direction and pair', () => {
    const [a, b, c] = [0, 1, 2].map(() => generateKeyPairSync('ed25519'));
    const ab = callKey(x25519PrivateOf(a.privateKey), x25519PublicOf(b.publicKey), 'a', 'b');
    expect(callKey(x25519PrivateOf(b.privateKey), x25519PublicOf(a.publicKey), 'a', 'b').equals(ab)).toBe(true);
    expect(callKey(x25519PrivateOf(b.privateKey), x25519PublicOf(a.publicKey), 'b', 'a').equals(ab)).toBe(false);
    expect(callKey(x25519PrivateOf(c.privateKey), x25519PublicOf(b.publicKey), 'a', 'b').equals(ab)).toBe(false);
  });
});
