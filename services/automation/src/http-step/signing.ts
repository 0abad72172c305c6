import { createHmac, randomBytes } from 'node:crypto';

/**
 * http_request steps are signed as webhooks are (Standard Webhooks, ARCHITECTURE.md "Webhooks"): a rule's secret is
 * `whsec_` + base64 of 32 random bytes, its HMAC key those bytes, and each request carries `webhook-id`,
 * `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. A receiver that
 * verifies webhooks verifies these with the same code.
 */
const PREFIX = 'whsec_';

export function generateSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

export function keyOf(secret: string): Buffer {
  return Buffer.from(secret.slice(PREFIX.length), 'base64');
}

export function signedHeaders(secret: string, id: string, body: string, now = Date.now()): Record<string, string> {
  const ts = Math.floor(now / 1000);
  const signature = createHmac('sha256', keyOf(secret)).update(`${id}.${ts}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${signature}` };
}
