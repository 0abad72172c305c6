import type { Logger } from '@crm/logger';
import type { Clients } from '../clients';
import type { PresenceChange } from './socket-admission';

/** Waits before the attempts after the first: identity restarting is ridden out, a longer outage is logged. */
const RETRY_DELAYS_MS = [500, 2_000, 5_000];

/**
 * Tells identity a user's first socket connected or their last one went (SocketsPerUser decides which, across the
 * gateways). Reports carry Redis's order (`seq`), so a retried one that arrives after a newer one changes nothing
 * there: retrying is safe. A report lost for good (identity away through every attempt) leaves the user as identity
 * last knew them until their next connect or disconnect.
 */
export class PresenceReporter {
  private readonly pending = new Set<Promise<void>>();
  private stopping = false;

  constructor(
    private readonly clients: Clients,
    private readonly log: Logger,
  ) {}

  report(change: PresenceChange): void {
    const p = this.send(change).finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  private async send({ orgId, userId, connected, seq }: PresenceChange): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.clients.identity.ReportPresence({ userId, connected, seq }, { orgId, userId, role: '', requestId: `presence-${seq}` });
        return;
      } catch (err) {
        if (this.stopping || attempt >= RETRY_DELAYS_MS.length) {
          this.log.warn({ err, orgId, userId, connected }, 'socket presence: identity was not told');
          return;
        }
        await new Promise((r) => setTimeout(r, RETRY_DELAYS_MS[attempt]).unref());
      }
    }
  }

  /** Sends what is under way once more at most (no further retries), and waits for it. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled([...this.pending]);
  }
}
