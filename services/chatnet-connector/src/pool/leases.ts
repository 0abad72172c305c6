import type { ConnectorRedis } from '../redis';

/** The live state an instance publishes for each account it holds, read by GET status and the list. */
export interface LiveInfo {
  instance: string;
  state: 'qr_pending' | 'connecting' | 'connected' | 'disconnected';
  connectedAt?: string;
  lastHeartbeat?: string;
}

/** Live info outlives the lease so a dead holder's last heartbeat stays visible ("last seen"). */
const LIVE_INFO_TTL_S = 7 * 24 * 3600;

/**
 * Each live session is held by exactly one instance through a lease: `SET lease:<account> <instance> NX PX`,
 * renewed by the holder's heartbeat (compare-and-expire, so a holder that lost it never renews someone
 * else's). When a holder dies its leases lapse and another instance takes the accounts over.
 * Instances register their gRPC address so calls can be forwarded to the holder.
 */
export class Leases {
  private readonly p: string;

  constructor(
    private readonly redis: ConnectorRedis,
    prefix: string,
    readonly instanceId: string,
    private readonly ttlMs: number,
  ) {
    this.p = `${prefix}chatnet:`;
  }

  leaseKey(accountId: string): string {
    return `${this.p}lease:${accountId}`;
  }
  private liveKey(accountId: string): string {
    return `${this.p}live:${accountId}`;
  }
  private instanceKey(instanceId: string): string {
    return `${this.p}instance:${instanceId}`;
  }
  private get instancesKey(): string {
    return `${this.p}instances`;
  }
  backoffKey(accountId: string): string {
    return `${this.p}backoff:${accountId}`;
  }

  /** Take the lease when nobody holds it. */
  async acquire(accountId: string, state: LiveInfo['state']): Promise<boolean> {
    const ok = await this.redis.set(this.leaseKey(accountId), this.instanceId, { PX: this.ttlMs, NX: true });
    if (ok !== 'OK') return false;
    await this.redis
      .multi()
      .hSet(this.liveKey(accountId), { instance: this.instanceId, state, connectedAt: '', lastHeartbeat: new Date().toISOString() })
      .expire(this.liveKey(accountId), LIVE_INFO_TTL_S)
      .exec();
    return true;
  }

  /** Renew many leases in one pipeline; returns the ids whose lease we no longer own. */
  async renew(entries: Array<{ accountId: string; state: LiveInfo['state']; connectedAt?: Date }>): Promise<string[]> {
    if (entries.length === 0) return [];
    const now = new Date().toISOString();
    // Issued together, they go out as one pipeline (node-redis writes the commands of one tick in one batch).
    const results = await Promise.all(
      entries.map((e) =>
        this.redis.chatnetRenewLease(
          this.leaseKey(e.accountId),
          this.liveKey(e.accountId),
          this.instanceId,
          this.ttlMs,
          e.state,
          e.connectedAt?.toISOString() ?? '',
          now,
          LIVE_INFO_TTL_S,
        ),
      ),
    );
    // A failed call (Redis unreachable) rejects the whole heartbeat: nothing is known to be lost, the next one retries.
    return entries.filter((_, i) => results[i] !== 1).map((e) => e.accountId);
  }

  async release(accountId: string): Promise<void> {
    await this.redis.chatnetReleaseLease(this.leaseKey(accountId), this.liveKey(accountId), this.instanceId);
  }

  async holderOf(accountId: string): Promise<string | null> {
    return this.redis.get(this.leaseKey(accountId));
  }

  /** Holders of many accounts (null = nobody). */
  async holders(accountIds: string[]): Promise<Array<string | null>> {
    if (accountIds.length === 0) return [];
    return this.redis.mGet(accountIds.map((id) => this.leaseKey(id)));
  }

  async liveInfo(accountIds: string[]): Promise<Array<{ holder: string | null; info: Partial<LiveInfo> }>> {
    if (accountIds.length === 0) return [];
    // One pipeline: every command is issued before any reply is awaited.
    const [holders, infos] = await Promise.all([
      this.redis.mGet(accountIds.map((id) => this.leaseKey(id))),
      Promise.all(accountIds.map((id) => this.redis.hGetAll(this.liveKey(id)))),
    ]);
    return accountIds.map((_, i) => ({ holder: holders[i] ?? null, info: (infos[i] ?? {}) as Partial<LiveInfo> }));
  }

  /** Announce this instance and its address; refreshed with every heartbeat. */
  async register(address: string): Promise<void> {
    const now = Date.now();
    await this.redis
      .multi()
      .set(this.instanceKey(this.instanceId), address, { PX: this.ttlMs })
      .zAdd(this.instancesKey, { score: now, value: this.instanceId })
      .zRemRangeByScore(this.instancesKey, '-inf', now - this.ttlMs)
      .exec();
  }

  async unregister(): Promise<void> {
    await this.redis.multi().del(this.instanceKey(this.instanceId)).zRem(this.instancesKey, this.instanceId).exec();
  }

  async addressOf(instanceId: string): Promise<string | null> {
    return this.redis.get(this.instanceKey(instanceId));
  }

  /** Ids of the instances that heartbeated within a lease lifetime (this one included). */
  async liveInstances(): Promise<string[]> {
    return this.redis.zRangeByScore(this.instancesKey, Date.now() - this.ttlMs, '+inf');
  }

  private handoffKey(accountId: string): string {
    return `${this.p}handoff:${accountId}`;
  }

  /**
   * Note that this instance is handing an account over to rebalance, for `ms`: until then its own scan
   * leaves the account to the others instead of taking it straight back.
   */
  async markHandoff(accountId: string, ms: number): Promise<void> {
    await this.redis.set(this.handoffKey(accountId), this.instanceId, { PX: ms });
  }

  /** Of many accounts, the instance handing each over (null = none). */
  async handoffs(accountIds: string[]): Promise<Array<string | null>> {
    if (accountIds.length === 0) return [];
    return this.redis.mGet(accountIds.map((id) => this.handoffKey(id)));
  }

  /**
   * Hold off reconnect attempts of an account after a drop or a failed restore: `baseMs` after the first,
   * doubling with each failure in a row (at most 5 minutes). Returns the delay chosen.
   */
  async backOff(accountId: string, baseMs: number): Promise<number> {
    const failsKey = `${this.p}fails:${accountId}`;
    const [fails] = (await this.redis.multi().incr(failsKey).expire(failsKey, 3600).exec()) as unknown as [number, number];
    const delay = Math.min(baseMs * 2 ** Math.min(fails - 1, 16), 300_000);
    if (delay > 0) await this.redis.set(this.backoffKey(accountId), String(fails), { PX: delay });
    return delay;
  }

  async clearBackoff(accountId: string): Promise<void> {
    await this.redis.del([this.backoffKey(accountId), `${this.p}fails:${accountId}`]);
  }

  async backoffs(accountIds: string[]): Promise<Array<string | null>> {
    if (accountIds.length === 0) return [];
    return this.redis.mGet(accountIds.map((id) => this.backoffKey(id)));
  }
}
