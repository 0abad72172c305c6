import { status as grpcStatus } from '@crm/grpc-kit';
import type { Remote } from '../remote';

export interface AlertRecipient {
  email: string;
  fullName: string;
  active: boolean;
  notifyByEmail: boolean;
}

const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;

/**
 * A user's address and email-alert preference from identity (GetUser), kept 30 s: a burst of messages asks
 * identity once per user, and a changed preference applies within half a minute. Null: not a user of the org
 * (deleted, or an id from elsewhere). Identity unreachable: the error propagates (the event is retried).
 */
export class AlertRecipients {
  private readonly cache = new Map<string, { at: number; value: AlertRecipient | null }>();

  constructor(private readonly remote: Remote) {}

  /** `traceparent`: the trace of the event the recipient is asked for, which identity's call continues. */
  async get(orgId: string, userId: string, requestId: string, traceparent: string | undefined): Promise<AlertRecipient | null> {
    const key = `${orgId}/${userId}`;
    const hit = this.cache.get(key);
    if (hit && Date.now() - hit.at < TTL_MS) return hit.value;
    let value: AlertRecipient | null;
    try {
      const u = await this.remote.identity().GetUser({ id: userId }, { ...(await this.remote.actingFor(orgId, requestId)), traceparent });
      value = { email: u.email, fullName: u.fullName, active: u.status === 'active', notifyByEmail: u.notifyByEmail === true };
    } catch (err) {
      if ((err as { code?: number }).code !== grpcStatus.NOT_FOUND) throw err;
      value = null;
    }
    // Bounded: past the limit the oldest entry goes (Map keeps insertion order).
    this.cache.delete(key);
    if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, { at: Date.now(), value });
    return value;
  }
}
