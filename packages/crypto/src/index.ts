import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Secrets at rest (AI keys, webhook secrets, chat session data): AES-256-GCM with a fresh 96-bit IV per
 * value, the owning org and row id bound in as additional authenticated data (a ciphertext copied onto
 * another row or org fails to decrypt), and a key-version prefix so keys can be rotated:
 * `v<version>:<base64 iv|tag|ciphertext>`.
 */
export class SecretBox {
  private readonly keys = new Map<number, Buffer>();
  private readonly current: number;

  /** `keys`: version → 32-byte key as base64 or 64 hex chars; the highest version encrypts. */
  constructor(keys: Record<number, string>) {
    for (const [v, raw] of Object.entries(keys)) this.keys.set(Number(v), decodeKey(raw));
    if (this.keys.size === 0) throw new Error('SecretBox needs at least one key');
    this.current = Math.max(...this.keys.keys());
  }

  /** Parse `ENCRYPTION_KEY` (one key = version 1) plus optional `ENCRYPTION_KEYS_OLD` ("1:key,2:key"). */
  static fromEnv(current: string, old = ''): SecretBox {
    const keys: Record<number, string> = {};
    let maxOld = 0;
    for (const part of old.split(',').filter(Boolean)) {
      const [v, k] = part.split(':');
      keys[Number(v)] = k;
      maxOld = Math.max(maxOld, Number(v));
    }
    keys[maxOld + 1] = current;
    return new SecretBox(keys);
  }

  encrypt(plaintext: string, aad: string): string {
    const key = this.keys.get(this.current)!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(aad));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `v${this.current}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  decrypt(stored: string, aad: string): string {
    const m = /^v(\d+):(.+)$/.exec(stored);
    if (!m) throw new Error('Not an encrypted value');
    const key = this.keys.get(Number(m[1]));
    if (!key) throw new Error(`No key for version ${m[1]}`);
    const raw = Buffer.from(m[2], 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

function decodeKey(raw: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new Error('Encryption key must be 32 bytes (base64 or 64 hex characters)');
  return key;
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time comparison of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniformly random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** Show only the last four characters of a secret: `crm_live_••••abcd`. */
export function maskSecret(secret: string, keepPrefix = ''): string {
  if (!secret) return '';
  return `${keepPrefix}••••${secret.slice(-4)}`;
}
