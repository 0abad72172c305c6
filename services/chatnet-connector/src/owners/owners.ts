import type { CallContext, ClientFor } from '@crm/grpc-kit';
import { status, traceFields } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';

export interface Owner {
  id: string;
  fullName: string;
  email: string;
}

interface Cached {
  owner: Owner | null;
  expires: number;
}

const MAX_ENTRIES = 10_000;

/**
 * Account owners as identity knows them, cached in memory for a short while (a renamed user shows up
 * within OWNER_CACHE_SECONDS). identity being down degrades to `owner: null` with a warning, never an
 * error or a hang: each lookup has a short deadline.
 */
export class OwnerDirectory {
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly identity: ClientFor<'identity.v1.IdentityService'>,
    private readonly ttlSeconds: number,
    private readonly log: Logger,
  ) {}

  async lookup(ctx: CallContext, userIds: Array<string | null>): Promise<Map<string, Owner | null>> {
    const out = new Map<string, Owner | null>();
    const wanted = [...new Set(userIds.filter((id): id is string => !!id))];
    await Promise.all(
      wanted.map(async (id) => {
        out.set(id, await this.one(ctx, id));
      }),
    );
    return out;
  }

  /** Whether the user exists in the caller's org (for ownerUserId given on create). */
  async exists(ctx: CallContext, userId: string): Promise<boolean | undefined> {
    try {
      await this.identity.GetUser({ id: userId }, ctx, { deadlineMs: 3000 });
      return true;
    } catch (err) {
      if ((err as { code?: number }).code === status.NOT_FOUND) return false;
      this.log.warn({ err, requestId: ctx.requestId, ...traceFields(ctx) }, 'identity unreachable while checking an owner');
      return undefined;
    }
  }

  private async one(ctx: CallContext, userId: string): Promise<Owner | null> {
    const key = `${ctx.orgId}:${userId}`;
    const hit = this.cache.get(key);
    if (hit && hit.expires > Date.now()) return hit.owner;
    try {
      const u = await this.identity.GetUser({ id: userId }, ctx, { deadlineMs: 2000 });
      return this.remember(key, { id: u.id, fullName: u.fullName, email: u.email });
    } catch (err) {
      if ((err as { code?: number }).code === status.NOT_FOUND) return this.remember(key, null);
      this.log.warn({ err, requestId: ctx.requestId, ...traceFields(ctx) }, 'identity unreachable; accounts listed without owner details');
      return hit?.owner ?? null;
    }
  }

  private remember(key: string, owner: Owner | null): Owner | null {
    if (this.ttlSeconds <= 0) return owner;
    if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, { owner, expires: Date.now() + this.ttlSeconds * 1000 });
    return owner;
  }
}
