import { AppError, type CallContext, invalid, type InternalAuth, TokenError } from '@crm/grpc-kit';
import type { Pool } from '@crm/db';
import { findGrant, saveGrant, type StoredGrant } from './grants.repo';

/** A grant read from the database is trusted this long before it is read again (another replica may have a newer one). */
const REREAD_MS = 10 * 60_000;
/** A renewal is written only when it lives this much longer than the grant held (the gateway renews about daily). */
const WRITE_WHEN_LONGER_BY_S = 3600;
/** Bound on the grants held in memory; past it the oldest go (they are read again when needed). */
const MAX_ENTRIES = 10_000;

/**
 * The orgs' grants (issue #27 item 3): the gateway's signature that automation may act for an org on its own, renewed
 * by the gateway while the org is in use (RenewGrant). Every call automation makes for an org on its own (a rule run,
 * a campaign, a reminder, an email alert) carries it as its origin; without one the callee refuses the call, so
 * automation says so first, as a retryable error (`grant_missing`): a new org's grant arrives with its first request.
 */
export class Grants {
  private readonly held = new Map<string, StoredGrant & { readAt: number }>();
  private readonly reading = new Map<string, Promise<StoredGrant | undefined>>();

  constructor(
    private readonly pool: Pool,
    private readonly auth: Pick<InternalAuth, 'verifyGrant'>,
  ) {}

  /** RenewGrant: check the gateway's grant is for this org and for automation, and keep it if it lives longer. */
  async renew(ctx: CallContext, grant: string): Promise<void> {
    if (ctx.caller !== 'gateway') throw new AppError('permission_denied', 'Only the gateway renews grants', { code: 'forbidden' });
    let claims;
    try {
      claims = this.auth.verifyGrant(grant);
    } catch (err) {
      if (err instanceof TokenError) throw invalid('grant', `is not a valid grant: ${err.message}`);
      throw err;
    }
    if (claims.org !== ctx.orgId || claims.svc !== 'automation') throw invalid('grant', 'is for another organization or service');
    const now = Date.now();
    const have = this.held.get(ctx.orgId);
    if (have && now - have.readAt < REREAD_MS && have.exp + WRITE_WHEN_LONGER_BY_S > claims.exp) return;
    if (await saveGrant(this.pool, ctx.orgId, { grant, exp: claims.exp })) this.hold(ctx.orgId, { grant, exp: claims.exp }, now);
    // The database holds a longer-lived one (another gateway's, or a renewal that overtook this one): read when needed.
    else this.held.delete(ctx.orgId);
  }

  /** The context of a call automation makes for `orgId` on its own: no user, the admin role, the org's grant as origin. */
  async actingFor(orgId: string, requestId: string): Promise<Partial<CallContext>> {
    const g = await this.current(orgId);
    if (!g) {
      throw new AppError('unavailable', `No grant for organization ${orgId} yet: the gateway renews it with the organization's next request`, {
        code: 'grant_missing',
      });
    }
    return { orgId, role: 'admin', requestId, origin: g.grant };
  }

  private async current(orgId: string): Promise<StoredGrant | undefined> {
    const now = Date.now();
    const have = this.held.get(orgId);
    if (have && now - have.readAt < REREAD_MS && have.exp * 1000 > now) return have;
    let pending = this.reading.get(orgId);
    if (!pending) {
      pending = findGrant(this.pool, orgId).finally(() => this.reading.delete(orgId));
      this.reading.set(orgId, pending);
    }
    const found = await pending;
    if (!found || found.exp * 1000 <= now) return undefined;
    this.hold(orgId, found, now);
    return found;
  }

  private hold(orgId: string, g: StoredGrant, now: number): void {
    this.held.delete(orgId);
    if (this.held.size >= MAX_ENTRIES) this.held.delete(this.held.keys().next().value as string);
    this.held.set(orgId, { ...g, readAt: now });
  }
}
