import { BoundedCache } from '@crm/grpc-kit';
import { secretKey } from '../domain/signing';

/** What decrypts a stored secret (the service's SecretBox). */
export interface Decrypter {
  decrypt(stored: string, aad: string): string;
}

/**
 * The signing key of each endpoint, decrypted once and kept (AES-GCM per attempt was ~3% of the webhooks process at
 * 200 messages a second, bench/realtime). Keyed by the stored ciphertext and its associated data: a new secret, or the
 * same one re-encrypted under a rotated master key, is a new entry, so nothing stale is ever used; an entry no longer
 * read just ages out (bounded: the oldest tenth goes when full). A secret that cannot be decrypted is never kept: each
 * attempt tries again and fails as before. Undefined for a secret that decrypts to no usable key.
 */
export class SigningKeys {
  private readonly keys = new BoundedCache<Buffer | undefined>(5_000);

  constructor(private readonly box: Decrypter) {}

  keyOf(secretEnc: string, aad: string): Buffer | undefined {
    const id = `${aad}\u0000${secretEnc}`;
    if (this.keys.has(id)) return this.keys.get(id);
    const key = secretKey(this.box.decrypt(secretEnc, aad));
    this.keys.set(id, key);
    return key;
  }
}
