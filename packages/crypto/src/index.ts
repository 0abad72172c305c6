import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Secrets at rest (AI keys, webhook secrets, chat session data): AES-256-GCM with a fresh 96-bit IV per
 * value, the owning org and row id bound in as additional authenticated data (a ciphertext copied onto
 * another row or org fails to decrypt), and the id of the key that wrote it in front, so keys can be rotated:
 * `k<key id>:<base64 iv|tag|ciphertext>`, the key id being 8 hex digits of a hash of the key. The id belongs to
 * the key, not to its place in ENCRYPTION_KEYS_OLD: once `npm run rotate-keys` has re-encrypted everything, the
 * former keys can be removed and the current one still reads what it wrote. Values written before key ids
 * (`v<version>:…`, the version being the key's place: old keys 1…n, then the current one) still decrypt.
 */
export class SecretBox {
  /** Legacy versions: `v<n>:` prefixes. */
  private readonly versions = new Map<number, Buffer>();
  private readonly byId = new Map<string, Buffer>();
  private readonly currentKey: Buffer;
  private readonly currentId: string;

  /** `keys`: version → 32-byte key as base64 or 64 hex chars; the highest version encrypts. */
  constructor(keys: Record<number, string>) {
    for (const [v, raw] of Object.entries(keys)) {
      const key = decodeKey(raw);
      this.versions.set(Number(v), key);
      this.byId.set(keyId(key), key);
    }
    if (this.versions.size === 0) throw new Error('SecretBox needs at least one key');
    this.currentKey = this.versions.get(Math.max(...this.versions.keys()))!;
    this.currentId = keyId(this.currentKey);
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
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.currentKey, iv);
    cipher.setAAD(Buffer.from(aad));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `k${this.currentId}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  decrypt(stored: string, aad: string): string {
    const byId = /^k([0-9a-f]{8}):(.+)$/.exec(stored);
    const legacy = byId ? undefined : /^v(\d+):(.+)$/.exec(stored);
    if (!byId && !legacy) throw new Error('Not an encrypted value');
    const key = byId ? this.byId.get(byId[1]) : this.versions.get(Number(legacy![1]));
    if (!key) throw new Error(byId ? `No key with id ${byId[1]}` : `No key for version ${legacy![1]}`);
    const raw = Buffer.from((byId ?? legacy)![2], 'base64');
    // GCM accepts tags as short as 4 bytes unless told otherwise: a truncated tag makes forgery far cheaper.
    if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('Encrypted value too short');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }

  /** Whether a stored value was written by another key than the current one, or before key ids (`npm run rotate-keys`). */
  needsRotation(stored: string): boolean {
    return !stored.startsWith(`k${this.currentId}:`);
  }

  /** The same secret encrypted under the current key (same AAD). */
  reencrypt(stored: string, aad: string): string {
    return this.encrypt(this.decrypt(stored, aad), aad);
  }
}

/** A key's id in stored values: not secret (a hash), stable whatever the key's place in the configuration. */
function keyId(key: Buffer): string {
  return createHash('sha256').update('secretbox-key-id:').update(key).digest('hex').slice(0, 8);
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
