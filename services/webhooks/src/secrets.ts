import type { EncryptedColumn } from '@crm/db';
import { secretAad } from './deps';

/** The columns this service keeps SecretBox ciphertexts in (`npm run rotate-keys` re-encrypts them). */
export const ENCRYPTED_COLUMNS: EncryptedColumn[] = [
  { table: 'webhook_settings', column: 'secret_enc', key: ['org_id', 'id'], aad: (r) => secretAad(r.org_id, r.id) },
];
