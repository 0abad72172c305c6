import type { AccessClaims } from '@crm/auth';
import { BoundedCache } from '@crm/grpc-kit';

/** Bound on remembered tokens; past it the oldest tenth is dropped at once. */
const MAX_ENTRIES = 10_000;

/**
 * `verify` with a memory of the tokens it accepted: a client sends the same access token with every request for its
 * whole lifetime, and checking its signature and claims again each time cost more than anything else the bearer
 * check does. A remembered token is the exact string that verified, with this process's one secret, and is used
 * only until its `exp` (as jsonwebtoken checks it: expired from that second on); revocation and the rate limit are
 * still checked on every request by the caller. Refused tokens are not remembered, so junk cannot fill the memory.
 */
export function rememberVerified(verify: (token: string) => AccessClaims | undefined, now = () => Date.now()) {
  const known = new BoundedCache<AccessClaims>(MAX_ENTRIES);
  return (token: string): AccessClaims | undefined => {
    const seconds = Math.floor(now() / 1000);
    const hit = known.get(token);
    if (hit) {
      if (seconds < hit.exp) return hit;
      known.delete(token);
      return undefined;
    }
    const claims = verify(token);
    if (!claims || typeof claims.exp !== 'number') return claims;
    known.set(token, claims);
    return claims;
  };
}
