import type { ClientFor, InternalAuth } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';

/** An org's grant is renewed at most this often per gateway instance (a grant lives half a year: grpc-kit grant.ts). */
const RENEW_EVERY_MS = 24 * 3600_000;
/** After a failed renewal (automation down or not deployed), the org's next request tries again after this long. */
const RETRY_AFTER_MS = 60_000;
const MAX_ENTRIES = 100_000;

/**
 * automation acts for an org on its own (rule runs, campaigns, reminders, email alerts) only under the gateway's grant
 * for that org (issue #27 item 3). The gateway is the one that sees the org in use: on an org's first authenticated
 * request of the day here it signs a fresh grant and hands it to automation (RenewGrant), in the background, so no
 * request waits for it. An org nobody uses for half a year loses its grant, and automation stops acting for it.
 */
export class GrantRenewals {
  /** org → when a renewal may next be sent from here. */
  private readonly next = new Map<string, number>();

  constructor(
    private readonly auth: Pick<InternalAuth, 'signGrant'>,
    private readonly automation: () => ClientFor<'automation.v1.AutomationService'>,
    private readonly log: Logger,
  ) {}

  /** A request of `orgId` was authenticated (as `userId` with `role`, for the call's context). */
  touched(orgId: string, userId: string, role: string, now = Date.now()): void {
    const due = this.next.get(orgId);
    if (due !== undefined && now < due) return;
    this.next.set(orgId, now + RENEW_EVERY_MS);
    if (this.next.size > MAX_ENTRIES) this.prune(now);
    const grant = this.auth.signGrant(orgId, 'automation');
    this.automation()
      .RenewGrant({ grant }, { orgId, userId, role })
      .catch((err: unknown) => {
        this.next.set(orgId, Date.now() + RETRY_AFTER_MS);
        this.log.warn({ err, orgId }, "could not renew automation's grant for an organization; trying again with a later request");
      });
  }

  private prune(now: number): void {
    for (const [org, due] of this.next) if (due <= now) this.next.delete(org);
  }
}
