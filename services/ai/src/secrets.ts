import type { EncryptedColumn } from '@crm/db';
import { aad } from './domain/providers';

/** The columns this service keeps SecretBox ciphertexts in (`npm run rotate-keys` re-encrypts them). */
export const ENCRYPTED_COLUMNS: EncryptedColumn[] = [
  { table: 'provider_settings', column: 'api_key_enc', key: ['org_id', 'provider'], aad: (r) => aad(r.org_id, r.provider) },
];
