import type { KeyObject } from 'node:crypto';
import { checkLifetime, signToken, TokenError, verifySigned } from './internal-token';

/**
 * A grant: the gateway's signature saying "a user of this org is using the product, and the named service may act for
 * the org on its own". automation, messaging, crm and the connector act long after any request or event, or on their
 * own (rule runs resuming after waits of up to 90 days, campaigns, reminders, email alerts; scheduled messages,
 * auto-replies, the assignment repair; crm's report and phone-check workers; received files): no request or event is
 * there to vouch for the org then. The gateway renews the org's grant for each of them about once
 * a day while the org's users make requests (services/gateway http/grant-renewals.ts); the service keeps it
 * (grant-keeper.ts) and sends it as the origin of the calls it makes on its own, so a callee knows the gateway, not
 * the caller, vouched for the org (ORIGIN_BOUND in internal-auth.ts). A compromised service can act only for orgs
 * whose grant it holds, and only through the methods its policy lists.
 */
export interface GrantClaims {
  /** Always the gateway: the only process that verifies end users (a service's "grant" is refused). */
  iss: 'gateway';
  aud: typeof GRANT_AUDIENCE;
  iat: number;
  exp: number;
  org: string;
  /** The service the grant was made for (it is stored there); any holder may forward it within a call it serves. */
  svc: string;
}

/** The audience of a grant: no service, so it can never pass as a call's own credential or as an event stamp. */
export const GRANT_AUDIENCE = 'grant';

/**
 * How long a grant vouches for its org: 180 days. The gateway renews it daily while the org's users or integrations
 * make requests, so only an org nobody has used for half a year loses those services' own calls (its rules, campaigns,
 * reminders and scheduled messages then fail until a user signs in again). Servers refuse a longer lifetime.
 */
export const GRANT_TTL_SECONDS = 180 * 24 * 3600;

export function signGrant(org: string, svc: string, key: KeyObject, now = Math.floor(Date.now() / 1000)): string {
  const claims: GrantClaims = { iss: 'gateway', aud: GRANT_AUDIENCE, iat: now, exp: now + GRANT_TTL_SECONDS, org, svc };
  return signToken(claims, key);
}

/** The claims of a grant the gateway's key signed, still within its lifetime; TokenError otherwise. */
export function verifyGrant(
  grant: string,
  publicKeys: ReadonlyMap<string, readonly KeyObject[]>,
  clockSkewSeconds: number,
  now = Math.floor(Date.now() / 1000),
): GrantClaims {
  const { claims } = verifySigned(grant, publicKeys);
  if (claims.aud !== GRANT_AUDIENCE) throw new TokenError('not a grant');
  if (claims.iss !== 'gateway') throw new TokenError('a grant is made by the gateway only');
  checkLifetime(claims, GRANT_TTL_SECONDS, clockSkewSeconds, now);
  for (const k of ['org', 'svc'] as const) if (typeof claims[k] !== 'string' || claims[k] === '') throw new TokenError(`bad ${k}`);
  return claims as unknown as GrantClaims;
}

/** The audience a token says it has, read without verifying: only to choose which check applies. */
export function claimedAudience(token: string): string | undefined {
  const body = token.split('.')[1];
  if (!body) return undefined;
  try {
    const aud = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'))?.aud;
    return typeof aud === 'string' ? aud : undefined;
  } catch {
    return undefined;
  }
}
