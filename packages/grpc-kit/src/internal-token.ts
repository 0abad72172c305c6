import { createHmac, createPrivateKey, createPublicKey, KeyObject, sign, verify } from 'node:crypto';

/**
 * The internal credential's wire format: a compact JWS (header.payload.signature, base64url) signed with
 * Ed25519 ("EdDSA"). Each process holds only its own private key and everyone's public keys, so a
 * compromised service can sign as itself, never as the gateway or another service.
 *
 * Hand-rolled rather than jsonwebtoken: that library has no EdDSA, and the format is three base64url
 * parts; the checks that matter (pinned algorithm, issuer's own key, audience, short lifetime) are below.
 */
export interface InternalClaims {
  /** Issuing process: 'gateway' or a service name. Also the header's `kid`: the key that must verify. */
  iss: string;
  /** The service the token is for; a token for crm is worthless at identity. */
  aud: string;
  iat: number;
  exp: number;
  org: string;
  /** User id, or `service:<name>` when a service acts on its own. */
  sub: string;
  role: string;
  /** What the issuer claims it may do (`*` for the gateway); the receiver's own policy is what decides. */
  scp: string[];
  /** The client's address as the gateway saw it (sign-in throttling uses it). */
  ip: string;
}

const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');

/** An Ed25519 private key from its 32-byte seed (what SERVICE_PRIVATE_KEY holds, base64). */
export function privateKeyFromSeed(seed: Buffer): KeyObject {
  if (seed.length !== 32) throw new Error('an Ed25519 private key is a 32-byte seed');
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
}

/** An Ed25519 public key from its raw 32 bytes (what SERVICE_PUBLIC_KEYS lists, base64). */
export function publicKeyFromRaw(raw: Buffer): KeyObject {
  if (raw.length !== 32) throw new Error('an Ed25519 public key is 32 bytes');
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519, raw]), format: 'der', type: 'spki' });
}

export function rawPublicKey(privateKey: KeyObject): Buffer {
  return (createPublicKey(privateKey).export({ format: 'der', type: 'spki' }) as Buffer).subarray(SPKI_ED25519.length);
}

/**
 * Development and test only: every process's key derived from one shared seed, so `npm start` and the test
 * stacks need a single generated secret. Anyone holding the seed can sign as anyone, hence refused in production.
 */
export function seedFor(devSeed: string, name: string): Buffer {
  return createHmac('sha256', devSeed).update(`internal-key:${name}`).digest();
}

const b64url = (buf: Buffer) => buf.toString('base64url');

export function signInternalToken(claims: InternalClaims, key: KeyObject): string {
  return signToken(claims, key);
}

/** A compact EdDSA JWS of any claims naming their issuer (the internal credential, an event stamp). */
export function signToken(claims: { iss: string }, key: KeyObject): string {
  const head = b64url(Buffer.from(JSON.stringify({ alg: 'EdDSA', typ: 'JWT', kid: claims.iss })));
  const body = b64url(Buffer.from(JSON.stringify(claims)));
  const input = `${head}.${body}`;
  return `${input}.${b64url(sign(null, Buffer.from(input), key))}`;
}

/** Why a token was refused; the caller turns it into UNAUTHENTICATED without telling the peer which. */
export class TokenError extends Error {}

export interface VerifyOptions {
  /** The service the token must be for; null for an origin (a token forwarded down a chain of calls, for its org). */
  audience: string | null;
  /** Each issuer's accepted keys: more than one while a key is being rotated. */
  publicKeys: ReadonlyMap<string, readonly KeyObject[]>;
  /** Longest lifetime accepted, whatever the token says (seconds). */
  maxLifetimeSeconds: number;
  clockSkewSeconds: number;
  now?: number;
}

export function verifyInternalToken(token: string, opts: VerifyOptions): InternalClaims {
  return verifyInternalTokenWithKey(token, opts).claims;
}

/**
 * The claims of a compact EdDSA JWS whose signature one of its issuer's keys verifies (header `kid` = claims `iss`),
 * and that key; nothing about audience or lifetime yet. Shared by the internal credential and the event stamp.
 */
export function verifySigned(
  token: string,
  publicKeys: ReadonlyMap<string, readonly KeyObject[]>,
): { claims: Record<string, unknown>; key: KeyObject } {
  const { claims, keys, input, signature } = readSigned(token, publicKeys);
  const key = keys.find((k) => verify(null, input, k, signature));
  if (!key) throw new TokenError('bad signature');
  return { claims, key };
}

/**
 * A compact EdDSA JWS taken apart, nothing verified: its claims (whose `iss` is the header's `kid`), its issuer's
 * listed keys, and what its signature covers. For verifySigned, and for a token whose authenticity its holder can
 * establish otherwise (an event stamp's seal, internal-auth.ts).
 */
export function readSigned(
  token: string,
  publicKeys: ReadonlyMap<string, readonly KeyObject[]>,
): { claims: Record<string, unknown>; keys: readonly KeyObject[]; input: Buffer; signature: Buffer } {
  const parts = token.split('.');
  if (parts.length !== 3) throw new TokenError('malformed token');
  let header: { alg?: unknown; kid?: unknown };
  let claims: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  } catch {
    throw new TokenError('malformed token');
  }
  if (typeof claims !== 'object' || claims === null) throw new TokenError('malformed token');
  if (header.alg !== 'EdDSA' || typeof header.kid !== 'string') throw new TokenError('unexpected algorithm');
  const keys = publicKeys.get(header.kid);
  if (!keys?.length) throw new TokenError(`unknown issuer ${header.kid}`);
  if (claims.iss !== header.kid) throw new TokenError('issuer does not match the signing key');
  return { claims, keys, input: Buffer.from(`${parts[0]}.${parts[1]}`), signature: Buffer.from(parts[2], 'base64url') };
}

/** Refuses a lifetime that is missing, over, not begun, or longer than `maxLifetimeSeconds`. */
export function checkLifetime(claims: Record<string, unknown>, maxLifetimeSeconds: number, clockSkewSeconds: number, now: number): void {
  if (typeof claims.exp !== 'number' || typeof claims.iat !== 'number') throw new TokenError('no lifetime');
  if (claims.exp < now - clockSkewSeconds) throw new TokenError('expired');
  if (claims.iat > now + clockSkewSeconds) throw new TokenError('issued in the future');
  if (claims.exp - claims.iat > maxLifetimeSeconds) throw new TokenError('lifetime too long');
}

/** The claims, and the issuer's key that verified them (a call's proof is checked with the key derived from it). */
export function verifyInternalTokenWithKey(token: string, opts: VerifyOptions): { claims: InternalClaims; key: KeyObject } {
  const { claims, key } = verifySigned(token, opts.publicKeys);
  if (opts.audience !== null && claims.aud !== opts.audience) throw new TokenError('token is for another service');
  checkLifetime(claims, opts.maxLifetimeSeconds, opts.clockSkewSeconds, opts.now ?? Math.floor(Date.now() / 1000));
  if (!Array.isArray(claims.scp)) throw new TokenError('no scopes');
  for (const k of ['org', 'sub', 'role', 'ip', 'aud'] as const) if (typeof claims[k] !== 'string') throw new TokenError(`bad ${k}`);
  return { claims: claims as unknown as InternalClaims, key };
}
