import type { ApiKeyGrant } from '@crm/auth';
import type { ClientFor } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';

/** A key's use is reported to identity at most this often per gateway instance (identity writes at most once a minute). */
const REPORT_EVERY_MS = 60_000;

/**
 * `lastUsedAt` of API keys without a write per request: each gateway reports a key's use to identity at most once a
 * minute, in the background (a failed report is logged and tried again at a later use), and identity writes the row
 * only when its last use is a minute old, however many gateways report.
 */
export class ApiKeyUses {
  private readonly reported = new Map<string, number>();

  constructor(
    private readonly identity: ClientFor<'identity.v1.IdentityService'>,
    private readonly log: Logger,
  ) {}

  used(grant: ApiKeyGrant, now = Date.now()): void {
    const last = this.reported.get(grant.keyId);
    if (last !== undefined && now - last < REPORT_EVERY_MS) return;
    this.reported.set(grant.keyId, now);
    this.identity.RecordApiKeyUse({ id: grant.keyId }, { orgId: grant.orgId, userId: grant.userId, role: grant.role }).catch((err: unknown) => {
      this.reported.delete(grant.keyId);
      this.log.warn({ err, keyId: grant.keyId }, 'could not record an API key use');
    });
    if (this.reported.size > 10_000) this.prune(now);
  }

  private prune(now: number): void {
    for (const [id, at] of this.reported) if (now - at >= REPORT_EVERY_MS) this.reported.delete(id);
  }
}
