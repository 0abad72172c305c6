import { maskSecret } from '@crm/crypto';
import { isoOrUndefined, Queryable } from '@crm/db';
import { invalid, requireCan, traceFields, OrgContext } from '@crm/grpc-kit';
import type { IntegrationDeps } from '../deps';
import type { SocialnetCredentials } from './driver';

/**
 * The org's user token on the social network. The graph driver lists the pages a user manages with it (each
 * page comes with its own page token, which connecting stores); the sandbox scopes pages by org and ignores it.
 */
export const aad = (orgId: string) => `socialnet-user:${orgId}`;
const TOKEN_MAX = 4096;

interface Row {
  user_token_enc: string;
  token_mask: string;
  updated_at: Date;
}

async function find(db: Queryable, orgId: string): Promise<Row | undefined> {
  const { rows } = await db.query<Row>({
    name: 'crm_sn_credentials_get',
    text: 'SELECT user_token_enc, token_mask, updated_at FROM socialnet_credentials WHERE org_id = $1',
    values: [orgId],
  });
  return rows[0];
}

function status(row: Row | undefined) {
  return { hasToken: !!row, tokenMask: row?.token_mask ?? '', updatedAt: isoOrUndefined(row?.updated_at) };
}

/** What a driver call on the org's behalf (the call `ctx`) carries; a token that no longer decrypts counts as none. */
export async function credentialsOf(d: IntegrationDeps, ctx: OrgContext): Promise<SocialnetCredentials> {
  const { orgId } = ctx;
  const row = await find(d.pool, orgId);
  if (!row) return { orgId };
  try {
    return { orgId, userAccessToken: d.box.decrypt(row.user_token_enc, aad(orgId)) };
  } catch {
    d.log.warn({ orgId, ...traceFields(ctx) }, 'socialnet: the stored user token cannot be decrypted (key rotated away?)');
    return { orgId };
  }
}

export async function get(d: IntegrationDeps, ctx: OrgContext) {
  return status(await find(d.pool, ctx.orgId));
}

export async function set(d: IntegrationDeps, ctx: OrgContext, req: { accessToken?: string }) {
  requireCan(ctx, 'settings:edit');
  const { orgId } = ctx;
  const token = (req.accessToken ?? '').trim();
  if (token.length > TOKEN_MAX) throw invalid('accessToken', `must be at most ${TOKEN_MAX} characters`);
  if (!token) {
    await d.pool.query({ name: 'crm_sn_credentials_delete', text: 'DELETE FROM socialnet_credentials WHERE org_id = $1', values: [orgId] });
    return status(undefined);
  }
  const { rows } = await d.pool.query<Row>({
    name: 'crm_sn_credentials_set',
    text: `INSERT INTO socialnet_credentials (org_id, user_token_enc, token_mask) VALUES ($1, $2, $3)
           ON CONFLICT (org_id) DO UPDATE SET user_token_enc = EXCLUDED.user_token_enc, token_mask = EXCLUDED.token_mask, updated_at = now()
           RETURNING user_token_enc, token_mask, updated_at`,
    values: [orgId, d.box.encrypt(token, aad(orgId)), maskSecret(token)],
  });
  return status(rows[0]);
}
