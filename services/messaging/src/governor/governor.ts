import { randomUUID } from 'node:crypto';
import { AppError } from '@crm/grpc-kit';
import { LuaScript, type RedisClient } from '@crm/redis';
import type { GovernorLimits, OperationType, SendSource } from './governor-spec';

const DAY_MS = 86_400_000;

// Rolling windows kept as sorted sets of reservations (score = time). All windows are checked first and
// written only when every one has room, so a refused send costs nothing; a failed send is refunded.
const RESERVE = new LuaScript(`
local now = tonumber(ARGV[1])
local member = ARGV[2]
local wait = 0
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[1 + i * 2])
  local cap = tonumber(ARGV[2 + i * 2])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local n = redis.call('ZCARD', key)
  if n >= cap then
    local oldest = redis.call('ZRANGE', key, n - cap, n - cap, 'WITHSCORES')
    local w = tonumber(oldest[2]) + window - now
    if w > wait then wait = w end
  end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, tonumber(ARGV[1 + i * 2]))
end
return 0
`);

export interface Reservation {
  keys: string[];
  member: string;
}

/**
 * Per chat-network account send budget: a daily cap and a burst cap for every operation type, plus the
 * account's `total`. Exceeding any of them is a 429 with Retry-After (seconds until a slot frees up).
 */
export class SendGovernor {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly limits: GovernorLimits,
  ) {}

  private windows(orgId: string, accountId: string, source: SendSource) {
    const out: Array<{ key: string; windowMs: number; cap: number; label: string }> = [];
    for (const type of ['total', source] as OperationType[]) {
      const l = this.limits[type];
      // The org is part of the key so another org naming this account id can never touch its budget;
      // {…} is a hash tag: every key of one account lands on one cluster slot, as Lua requires.
      const base = `${this.prefix}msg:gov:{${orgId}:${accountId}}:${type}`;
      out.push({ key: `${base}:day`, windowMs: DAY_MS, cap: l.daily, label: `${type}: ${l.daily} per day` });
      out.push({ key: `${base}:burst`, windowMs: l.burstSeconds * 1000, cap: l.burst, label: `${type}: ${l.burst} per ${l.burstSeconds} s` });
    }
    return out;
  }

  async reserve(orgId: string, accountId: string, source: SendSource): Promise<Reservation> {
    const windows = this.windows(orgId, accountId, source);
    const member = randomUUID();
    const args: (string | number)[] = [Date.now(), member];
    for (const w of windows) args.push(w.windowMs, w.cap);
    let waitMs: number;
    try {
      waitMs = Number(
        await RESERVE.run(
          this.redis,
          windows.map((w) => w.key),
          args,
        ),
      );
    } catch {
      // Without its budget we cannot know a send is safe for the account: refuse rather than guess.
      throw new AppError('unavailable', 'The send governor is unavailable; try again shortly', { code: 'governor_unavailable' });
    }
    if (waitMs > 0) {
      const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
      throw new AppError('rate_limited', `Send limit reached for this chat-network account (${source}); retry in ${retryAfter} s`, {
        code: 'send_limit_reached',
        retryAfter,
      });
    }
    return { keys: windows.map((w) => w.key), member };
  }

  /** Give a reservation back: the send did not happen. */
  async refund(r: Reservation): Promise<void> {
    await Promise.all(r.keys.map((k) => this.redis.zRem(k, r.member)));
  }
}
