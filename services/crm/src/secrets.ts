import type { EncryptedColumn } from '@crm/db';
import { INTEGRATION_SECRETS } from './integrations';

/** The columns this service keeps SecretBox ciphertexts in (`npm run rotate-keys` re-encrypts them). */
export const ENCRYPTED_COLUMNS: EncryptedColumn[] = [...INTEGRATION_SECRETS];
