import { AppError, invalid } from './errors';
import type { CallContext } from './context';
import type { GrantClaims } from './grant';
import type { InternalPrincipal } from './internal-auth';
import { TokenError } from './internal-token';

/** What the keeper needs of a database (a pg Pool): the service's `org_grants` table, made by its own migration. */
export interface GrantTable {
  query(text: string, values: unknown[]): Promise<{ rows: Array<Record<string, unknown>>; rowCount: number | null }>;
}

/**
 * The DDL each service that keeps grants has in a migration of its own (its database, its table):
 *
 *   CREATE TABLE IF NOT EXISTS org_grants (org_id uuid PRIMARY KEY, grant_token text NOT NULL,
 *     expires_at timestamptz NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());
 */
interface Held {
  grant: string;
  /** Epoch seconds. */
  exp: number;
  readAt: number;
}

/** A grant read from the database is trusted this long before it is read again (another replica may have a newer one). */
const REREAD_MS = 10 * 60_000;
/** A renewal is written only when it lives this much longer than the grant held (the gateway renews about daily). */
const WRITE_WHEN_LONGER_BY_S = 3600;
/** Bound on the grants held in memory; past it the oldest go (they are read again when needed). */
const MAX_ENTRIES = 10_000;

/**
 * A service's grants per org (grant.ts; issue #27 item 3): the gateway's signature that this service may act for an
 * org on its own, renewed by the gateway while the org is in use (RenewGrant). Every call the service makes for an
 * org on its own (a timer, a job: no request or event vouches then) carries it as its origin; without one the callee
 * refuses the call, so the keeper says so first, as a retryable error (`grant_missing`): a new org's grant arrives with
 * its first authenticated request.
 */
export class GrantKeeper {
  private readonly held = new Map<string, Held>();
  private readonly reading = new Map<string, Promise<{ grant: string; exp: number } | undefined>>();

  constructor(
    private readonly db: GrantTable,
    private readonly auth: { verifyGrant(grant: string): GrantClaims },
    private readonly self: InternalPrincipal,
  ) {}

  /** RenewGrant: check the gateway's grant is for this org and this service, and keep it if it lives longer. */
  async renew(ctx: CallContext, grant: string): Promise<void> {
    if (ctx.caller !== 'gateway') throw new AppError('permission_denied', 'Only the gateway renews grants', { code: 'forbidden' });
    let claims: GrantClaims;
    try {
      claims = this.auth.verifyGrant(grant);
    } catch (err) {
      if (err instanceof TokenError) throw invalid('grant', `is not a valid grant: ${err.message}`);
      throw err;
    }
    if (claims.org !== ctx.orgId || claims.svc !== this.self) throw invalid('grant', 'is for another organization or service');
    const now = Date.now();
    const have = this.held.get(ctx.orgId);
    if (have && now - have.readAt < REREAD_MS && have.exp + WRITE_WHEN_LONGER_BY_S > claims.exp) return;
    // Keep the grant that lives longest: a renewal that arrives late (or from a gateway with a slow clock) changes nothing.
    const saved = await this.db.query(
      `INSERT INTO org_grants (org_id, grant_token, expires_at) VALUES ($1, $2, to_timestamp($3))
       ON CONFLICT (org_id) DO UPDATE SET grant_token = EXCLUDED.grant_token, expires_at = EXCLUDED.expires_at, updated_at = now()
        WHERE org_grants.expires_at < EXCLUDED.expires_at`,
      [ctx.orgId, grant, claims.exp],
    );
    if ((saved.rowCount ?? 0) > 0) this.hold(ctx.orgId, { grant, exp: claims.exp }, now);
    // The database holds a longer-lived one (another gateway's, or a renewal that overtook this one): read when needed.
    else this.held.delete(ctx.orgId);
  }

  /** The context of a call this service makes for `orgId` on its own: no user, the admin role, the org's grant as origin. */
  async actingFor(orgId: string, requestId: string): Promise<Partial<CallContext>> {
    const grant = await this.grantOf(orgId);
    if (!grant) {
      throw new AppError('unavailable', `No grant for organization ${orgId} yet: the gateway renews it with the organization's next request`, {
        code: 'grant_missing',
      });
    }
    return { orgId, role: 'admin', requestId, origin: grant };
  }

  /**
   * `ctx` with an origin: the request's or event's it already carries, else the org's grant (the service acting on its
   * own). Without either the callee refuses a bound call (origin_required): an org unused for half a year, or a new
   * one before its first request.
   */
  async vouch<C extends Partial<CallContext>>(ctx: C): Promise<C> {
    if (ctx.origin || !ctx.orgId) return ctx;
    const origin = await this.grantOf(ctx.orgId);
    return origin ? { ...ctx, origin } : ctx;
  }

  /** `client` whose every call goes out with `vouch(ctx)`: for a client whose calls a service also makes on its own. */
  vouching<T extends object>(client: T): T {
    return new Proxy(client, {
      get: (target, prop, receiver) => {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        // Only the service's methods (PascalCase, as in the proto) are calls; close() and the like go to the client.
        if (typeof prop !== 'string' || !/^[A-Z]/.test(prop)) return (value as (...a: unknown[]) => unknown).bind(target);
        return async (req: unknown, ctx: Partial<CallContext> = {}, ...rest: unknown[]) =>
          (value as (...a: unknown[]) => unknown).call(target, req, await this.vouch(ctx), ...rest);
      },
    });
  }

  /** The org's grant, or undefined while it has none (or only an expired one). */
  async grantOf(orgId: string): Promise<string | undefined> {
    const now = Date.now();
    const have = this.held.get(orgId);
    if (have && now - have.readAt < REREAD_MS && have.exp * 1000 > now) return have.grant;
    let pending = this.reading.get(orgId);
    if (!pending) {
      pending = this.read(orgId).finally(() => this.reading.delete(orgId));
      this.reading.set(orgId, pending);
    }
    const found = await pending;
    if (!found || found.exp * 1000 <= now) return undefined;
    this.hold(orgId, found, now);
    return found.grant;
  }

  private async read(orgId: string): Promise<{ grant: string; exp: number } | undefined> {
    const { rows } = await this.db.query(`SELECT grant_token, extract(epoch FROM expires_at)::bigint AS exp FROM org_grants WHERE org_id = $1`, [
      orgId,
    ]);
    const row = rows[0];
    return row ? { grant: String(row.grant_token), exp: Number(row.exp) } : undefined;
  }

  private hold(orgId: string, g: { grant: string; exp: number }, now: number): void {
    this.held.delete(orgId);
    if (this.held.size >= MAX_ENTRIES) this.held.delete(this.held.keys().next().value as string);
    this.held.set(orgId, { ...g, readAt: now });
  }
}
