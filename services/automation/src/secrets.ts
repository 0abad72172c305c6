import type { EncryptedColumn } from '@crm/db';
import { aad } from './email-channel';

/** The columns this service keeps SecretBox ciphertexts in (`npm run rotate-keys` re-encrypts them). */
export const ENCRYPTED_COLUMNS: EncryptedColumn[] = [{ table: 'email_channels', column: 'password_enc', key: ['org_id'], aad: (r) => aad(r.org_id) }];
