import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks (standardwebhooks.com): the secret is `whsec_` + base64 of 24–64 random bytes; the
 * HMAC key is those bytes. Each attempt is signed over `<webhook-id>.<webhook-timestamp>.<body>`.
 */
export const SECRET_PREFIX = 'whsec_';
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The key bytes of a well-formed secret, or undefined. */
export function secretKey(secret: string): Buffer | undefined {
  if (!secret.startsWith(SECRET_PREFIX)) return undefined;
  const b64 = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) return undefined;
  const key = Buffer.from(b64, 'base64');
  return key.length >= MIN_KEY_BYTES && key.length <= MAX_KEY_BYTES ? key : undefined;
}

export const SECRET_RULE = `must be "${SECRET_PREFIX}" followed by base64 of ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes`;

/** `v1,<base64 HMAC-SHA256>`: the value of the `webhook-signature` header. */
export function sign(key: Buffer, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export function signedHeaders(key: Buffer, id: string, body: string, now = Date.now()): SignedHeaders {
  const ts = Math.floor(now / 1000);
  return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': sign(key, id, ts, body) };
}
