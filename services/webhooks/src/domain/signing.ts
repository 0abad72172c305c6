import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks (standardwebhooks.com). A generated secret is `whsec_` + base64 of 32 random bytes and
 * its HMAC key is those bytes (any `whsec_` secret keeps that meaning: base64 of 24–64 bytes). A secret
 * the customer typed in their own format (16–128 printable characters, not starting with `whsec_`) is
 * used as its UTF-8 bytes, so a receiver that keys its HMAC with the string as written verifies it. Each
 * attempt is signed over `<webhook-id>.<webhook-timestamp>.<body>`.
 */
export const SECRET_PREFIX = 'whsec_';
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
export const MIN_TYPED_CHARS = 16;
export const MAX_TYPED_CHARS = 128;

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

// Control characters (tab, newline, DEL, C1), unpaired surrogates (no UTF-8 encoding) and line/paragraph
// separators: a secret is typed on one line and must be the same bytes on both sides.
const UNPRINTABLE = /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}]/u;

/** The HMAC key of a secret, or why the secret is not accepted (the message follows "secret "). */
export function parseSecret(secret: string): { key: Buffer } | { problem: string } {
  if (secret.startsWith(SECRET_PREFIX)) {
    const b64 = secret.slice(SECRET_PREFIX.length);
    const key = /^[A-Za-z0-9+/]+={0,2}$/.test(b64) && b64.length % 4 === 0 ? Buffer.from(b64, 'base64') : undefined;
    if (key && key.length >= MIN_KEY_BYTES && key.length <= MAX_KEY_BYTES) return { key };
    return { problem: `starting with "${SECRET_PREFIX}" must continue with base64 of ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes` };
  }
  // Characters, not UTF-16 units or bytes: "é" and "😀" count one each.
  const chars = [...secret].length;
  if (chars < MIN_TYPED_CHARS || chars > MAX_TYPED_CHARS) {
    return {
      problem: `must be ${MIN_TYPED_CHARS} to ${MAX_TYPED_CHARS} characters, or "${SECRET_PREFIX}" followed by base64 of ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes`,
    };
  }
  if (UNPRINTABLE.test(secret)) return { problem: 'must not contain control characters or line breaks' };
  return { key: Buffer.from(secret, 'utf8') };
}

/** The key bytes of an acceptable secret, or undefined. */
export function secretKey(secret: string): Buffer | undefined {
  const parsed = parseSecret(secret);
  return 'key' in parsed ? parsed.key : undefined;
}

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
