import type { CallContext, InternalAuth, InternalPrincipal } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';

/** An org's grant is renewed at most this often per service and gateway instance (a grant lives half a year: grpc-kit grant.ts). */
const RENEW_EVERY_MS = 24 * 3600_000;
/** After a failed renewal (the service down or not deployed), the org's next request tries again after this long. */
const RETRY_AFTER_MS = 60_000;
const MAX_ENTRIES = 100_000;

/** A service that keeps grants, and how to hand it one (its RenewGrant). */
export interface GrantHolder {
  service: InternalPrincipal;
  renew(grant: string, ctx: Partial<CallContext>): Promise<unknown>;
}

/**
 * automation, messaging, crm and the connector act for an org on their own (rule runs, campaigns, reminders, scheduled
 * messages, auto-replies, the assignment repair, crm's report and phone-check workers, received files) only under the
 * gateway's grant for that org (issue #27 item 3). The gateway is
 * the one that sees the org in use: on an org's first authenticated request of the day here it signs a fresh grant for
 * each such service and hands it over (RenewGrant), in the background, so no request waits for it. An org nobody uses
 * for half a year loses its grants, and those services stop acting for it on their own.
 */
export class GrantRenewals {
  /**
   * org → when its renewals may next be sent from here. One entry per org, looked up once per request (this runs on
   * every authenticated request): all holders are renewed together, and a failure of any one retries them all after
   * RETRY_AFTER_MS (renewing a holder that already has a grant is harmless: it keeps the longest-lived one).
   */
  private readonly next = new Map<string, number>();

  constructor(
    private readonly auth: Pick<InternalAuth, 'signGrant'>,
    private readonly holders: readonly GrantHolder[],
    private readonly log: Logger,
  ) {}

  /** A request of `orgId` was authenticated (as `userId` with `role`, for the calls' context). */
  touched(orgId: string, userId: string, role: string, now = Date.now()): void {
    const due = this.next.get(orgId);
    if (due !== undefined && now < due) return;
    this.next.set(orgId, now + RENEW_EVERY_MS);
    if (this.next.size > MAX_ENTRIES) this.prune(now);
    for (const holder of this.holders) {
      holder.renew(this.auth.signGrant(orgId, holder.service), { orgId, userId, role }).catch((err: unknown) => {
        this.next.set(orgId, Math.min(this.next.get(orgId) ?? Infinity, Date.now() + RETRY_AFTER_MS));
        this.log.warn({ err, orgId, service: holder.service }, 'could not renew a grant for an organization; trying again with a later request');
      });
    }
  }

  private prune(now: number): void {
    for (const [org, due] of this.next) if (due <= now) this.next.delete(org);
  }
}
