import type { EncryptedColumn } from '@crm/db';
import { aad as userTokenAad } from './socialnet/credentials';
import { tokenAad } from './socialnet/page-access';

/** The columns integrations keep SecretBox ciphertexts in (`npm run rotate-keys` re-encrypts them). */
export const INTEGRATION_SECRETS: EncryptedColumn[] = [
  { table: 'integrations', column: 'access_token_enc', key: ['org_id', 'id'], aad: (r) => tokenAad(r.org_id, r.id) },
  { table: 'socialnet_credentials', column: 'user_token_enc', key: ['org_id'], aad: (r) => userTokenAad(r.org_id) },
];
