import type { SecretBox } from '@crm/crypto';
import type { IntegrationRow } from '../integrations.repo';
import { authExpired, PageAccess } from './driver';

export type TokenBox = Pick<SecretBox, 'encrypt' | 'decrypt'>;

/** Binds a stored page token to its org and integration row: a ciphertext copied elsewhere does not decrypt. */
export const tokenAad = (orgId: string, integrationId: string) => `socialnet-page:${orgId}:${integrationId}`;

/** How the network is addressed for a connected page: its id and the decrypted token (never logged, never returned). */
export function pageAccessOf(box: TokenBox, row: IntegrationRow): PageAccess {
  if (!row.access_token_enc) throw authExpired('The page is not connected');
  let accessToken: string;
  try {
    accessToken = box.decrypt(row.access_token_enc, tokenAad(row.org_id, row.id));
  } catch {
    // A key rotated away without ENCRYPTION_KEYS_OLD: the token is lost, connecting again stores a new one.
    throw authExpired('The stored page token cannot be read; connect the page again');
  }
  return { orgId: row.org_id, id: row.external_id, accessToken };
}
