import { AccessClaims, authKeys, Revocation } from '@crm/auth';
import type { Redis } from '../redis';

/** Why a token that verified is refused anyway. */
export type RevokedReason = 'logged_out' | 'access_changed';

interface TokenState {
  revoked: boolean;
  /** Epoch ms after which the entry is useless (the token's own expiry, or a short hold for an early message). */
  until: number;
}

interface UserState {
  /** Tokens issued at or before this epoch ms are refused; 0 when none. */
  validAfter: number;
  /** Last time a request of this user was checked: idle users are forgotten. */
  seen: number;
}

/** Keys per MGET in a resync, so one huge command does not hold Redis up for other clients. */
const MGET_CHUNK = 500;
/** A user not seen for this long is forgotten; their next request re-reads the valid-after key once. */
const USER_IDLE_MS = 15 * 60_000;
/**
 * A revocation message can overtake the first Redis read of a token it concerns (the read was sent before the
 * revocation, its reply arrives after the message). The message is kept this long so that reply cannot undo it.
 */
const EARLY_MESSAGE_HOLD_MS = 60_000;

export function revokedReason(claims: AccessClaims, revoked: boolean, validAfter: number): RevokedReason | undefined {
  if (revoked) return 'logged_out';
  if (validAfter && claims.ims <= validAfter) return 'access_changed';
  return undefined;
}

/**
 * The gateway's in-memory copy of the revocation keys identity writes (a token's jti deny-list entry, a user's
 * valid-after time), for the tokens and users this instance has seen.
 *
 * A token is read from Redis once, the first time this instance sees it; from then on its state is kept current by
 * the revocation messages identity publishes ({@link apply}) and by {@link resync} when a message may have been
 * missed. The owner (auth-sync.ts) decides when the local answer can be trusted: only while subscribed.
 */
export class TokenRevocations {
  private readonly keys: ReturnType<typeof authKeys>;
  private readonly tokens = new Map<string, TokenState>();
  private readonly users = new Map<string, UserState>();
  /** One Redis read per unseen token even when many requests carry it at once. */
  private readonly loading = new Map<string, Promise<RevokedReason | undefined>>();

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.keys = authKeys(prefix);
  }

  /** The answer from memory, or undefined when this token (or its user) has not been read yet. */
  local(claims: AccessClaims): { reason: RevokedReason | undefined } | undefined {
    const token = this.tokens.get(claims.jti);
    const user = this.users.get(claims.sub);
    if (!token || !user) return undefined;
    user.seen = Date.now();
    return { reason: revokedReason(claims, token.revoked, user.validAfter) };
  }

  /** Read this token's keys from Redis and remember them: the first sight of a token, or the fallback while unsubscribed. */
  load(claims: AccessClaims): Promise<RevokedReason | undefined> {
    const pending = this.loading.get(claims.jti);
    if (pending) return pending;
    const p = this.redis
      .mGet([this.keys.revokedJti(claims.jti), this.keys.validAfter(claims.sub)])
      .then(([revoked, validAfter]) => {
        const token = this.mergeToken(claims.jti, !!revoked, claims.exp * 1000);
        const user = this.mergeUser(claims.sub, Number(validAfter ?? 0));
        return revokedReason(claims, token.revoked, user.validAfter);
      })
      .finally(() => this.loading.delete(claims.jti));
    this.loading.set(claims.jti, p);
    return p;
  }

  /** A revocation message: applied to what we hold, and kept for a while if it concerns a token not read yet. */
  apply(r: Revocation): void {
    if ('jti' in r) this.mergeToken(r.jti, true, Date.now() + EARLY_MESSAGE_HOLD_MS);
    else this.mergeUser(r.userId, r.validAfter);
  }

  /** Re-read the keys of every token and user held (pipelined MGETs), for when a message may have been missed. */
  async resync(): Promise<void> {
    const jtis = [...this.tokens.keys()];
    const userIds = [...this.users.keys()];
    const keys = [...jtis.map((j) => this.keys.revokedJti(j)), ...userIds.map((u) => this.keys.validAfter(u))];
    const chunks: Promise<(string | null)[]>[] = [];
    // node-redis pipelines commands issued in the same tick: one round trip for all chunks.
    for (let i = 0; i < keys.length; i += MGET_CHUNK) chunks.push(this.redis.mGet(keys.slice(i, i + MGET_CHUNK)));
    const values = (await Promise.all(chunks)).flat();
    jtis.forEach((jti, i) => {
      const t = this.tokens.get(jti);
      if (t && values[i]) t.revoked = true;
    });
    userIds.forEach((id, i) => {
      const v = Number(values[jtis.length + i] ?? 0);
      const u = this.users.get(id);
      if (u && v > u.validAfter) u.validAfter = v;
    });
  }

  /** Forget expired tokens and idle users (a forgotten one is simply read from Redis again). */
  prune(now = Date.now()): void {
    for (const [jti, t] of this.tokens) if (t.until <= now) this.tokens.delete(jti);
    for (const [id, u] of this.users) if (u.seen + USER_IDLE_MS <= now) this.users.delete(id);
  }

  get size(): { tokens: number; users: number } {
    return { tokens: this.tokens.size, users: this.users.size };
  }

  /** Revocations only ever add: a revoked entry stays revoked whatever an older read says. */
  private mergeToken(jti: string, revoked: boolean, until: number): TokenState {
    const t = this.tokens.get(jti);
    if (!t) {
      const fresh = { revoked, until };
      this.tokens.set(jti, fresh);
      return fresh;
    }
    t.revoked ||= revoked;
    t.until = Math.max(t.until, until);
    return t;
  }

  private mergeUser(userId: string, validAfter: number): UserState {
    const u = this.users.get(userId);
    if (!u) {
      const fresh = { validAfter, seen: Date.now() };
      this.users.set(userId, fresh);
      return fresh;
    }
    u.validAfter = Math.max(u.validAfter, validAfter);
    return u;
  }
}
