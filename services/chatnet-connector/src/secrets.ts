import type { EncryptedColumn } from '@crm/db';
import { aad } from './account-store';

/** The columns this service keeps SecretBox ciphertexts in (`npm run rotate-keys` re-encrypts them). */
export const ENCRYPTED_COLUMNS: EncryptedColumn[] = [
  { table: 'chatnet_accounts', column: 'session_enc', key: ['org_id', 'id'], aad: (r) => aad(r.org_id, r.id) },
  { table: 'chatnet_accounts', column: 'proxy_enc', key: ['org_id', 'id'], aad: (r) => aad(r.org_id, r.id) },
];
