import { createHash, createPrivateKey, createPublicKey, diffieHellman, hkdfSync, KeyObject } from 'node:crypto';

/**
 * Pairwise call keys. Every internal call carries a proof (an HMAC over the method, a unique id and a short expiry)
 * that only its caller and its callee can compute, so a credential seen on the wire is good for that one call only.
 * Signing and verifying an Ed25519 token per call would cost ~100 µs of CPU per hop (measured here: sign 30 µs,
 * verify 75 µs); an HMAC costs ~2 µs. The key both sides share comes from X25519 over the keys each process already
 * has: an Ed25519 key pair converts to an X25519 one (the same scalar on the birationally equivalent curve, as
 * libsodium's crypto_sign_ed25519_{pk,sk}_to_curve25519), so no new key has to be distributed or rotated.
 */

const PKCS8_X25519 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const SPKI_X25519 = Buffer.from('302a300506032b656e032100', 'hex');
const PKCS8_ED25519_LENGTH = 48;
const P = 2n ** 255n - 19n;

function modPow(base: bigint, exp: bigint, mod: bigint): bigint {
  let result = 1n;
  let b = base % mod;
  let e = exp;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % mod;
    b = (b * b) % mod;
    e >>= 1n;
  }
  return result;
}

const fromLittleEndian = (buf: Buffer) => BigInt(`0x${Buffer.from(buf).reverse().toString('hex') || '0'}`);
const toLittleEndian32 = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex').reverse();

/** The X25519 private key of an Ed25519 private key: the first half of SHA-512 of its seed (X25519 clamps it itself). */
export function x25519PrivateOf(ed25519Private: KeyObject): KeyObject {
  const der = ed25519Private.export({ format: 'der', type: 'pkcs8' }) as Buffer;
  if (der.length !== PKCS8_ED25519_LENGTH) throw new Error('an Ed25519 private key was expected');
  const scalar = createHash('sha512')
    .update(der.subarray(der.length - 32))
    .digest()
    .subarray(0, 32);
  return createPrivateKey({ key: Buffer.concat([PKCS8_X25519, scalar]), format: 'der', type: 'pkcs8' });
}

/** The X25519 public key of an Ed25519 public key: Montgomery u = (1 + y) / (1 - y) mod 2^255 - 19. */
export function x25519PublicOf(ed25519Public: KeyObject): KeyObject {
  const der = ed25519Public.export({ format: 'der', type: 'spki' }) as Buffer;
  const raw = Buffer.from(der.subarray(der.length - 32));
  raw[31] &= 0x7f; // the sign bit of x
  const y = fromLittleEndian(raw);
  const u = (((1n + y) % P) * modPow((P + 1n - y) % P, P - 2n, P)) % P;
  return createPublicKey({ key: Buffer.concat([SPKI_X25519, toLittleEndian32(u)]), format: 'der', type: 'spki' });
}

/** The raw 32 bytes of an X25519 public key (to compare keys). */
export const rawX25519 = (key: KeyObject) => (key.export({ format: 'der', type: 'spki' }) as Buffer).subarray(SPKI_X25519.length);

/**
 * The key `from` uses to prove its calls to `to` (and `to` to check them): HKDF over their X25519 shared secret,
 * bound to the direction, so a proof for crm→identity is worthless identity→crm.
 */
export function callKey(mine: KeyObject, theirs: KeyObject, from: string, to: string): Buffer {
  return pairKey(mine, theirs, 'crm-internal-call', from, to);
}

/**
 * The key a producer seals its event stamps with for one consumer (and the consumer checks them with): the same shared
 * secret as the call keys, another HKDF salt, so a stamp's seal can never pass as a call's proof or the reverse.
 */
export function stampSealKey(mine: KeyObject, theirs: KeyObject, from: string, to: string): Buffer {
  return pairKey(mine, theirs, 'crm-event-stamp-seal', from, to);
}

function pairKey(mine: KeyObject, theirs: KeyObject, salt: string, from: string, to: string): Buffer {
  const shared = diffieHellman({ privateKey: mine, publicKey: theirs });
  return Buffer.from(hkdfSync('sha256', shared, salt, `${from}>${to}`, 32));
}
