import { randomUUID } from 'node:crypto';
import { ClaimLoop, type Pool } from '@crm/db';
import type { Logger } from '@crm/logger';
import type { PhoneDirectory } from './connector.client';
import {
  claimPhoneCheckBatches,
  PHONE_CHECK_CHANNEL,
  type PhoneCheckBatch,
  recordPhoneCheckAnswer,
  retryOrgPhoneChecksAt,
  retryPhoneChecksAt,
} from '../contacts';

export interface PhoneCheckOptions {
  pool: Pool;
  /** For the loop's own LISTEN connection: the direct URL (DATABASE_DIRECT_URL), not a pooler's. */
  databaseUrl: string;
  log: Logger;
  directory: PhoneDirectory;
  /** Fallback poll: retries that came due, lapsed claims (NOTIFY is the fast path for new numbers). */
  pollMs: number;
  /** Organizations checked at once by this instance. */
  concurrency: number;
  /** Contacts claimed per organization at a time. */
  batchSize: number;
  /** Least time between two lookups of one organization's numbers (the network limits lookups per account). */
  intervalMs: number;
  /** A lookup's deadline: a claim lasts long enough for a whole batch at this pace. */
  deadlineMs: number;
  /** First wait after "no connected account" or a failed lookup; doubles per consecutive miss of the org up to the max. */
  retryBaseMs: number;
  retryMaxMs: number;
}

/**
 * hasChatnet's phone check (issue #15): contacts with a phone and no chat-network identity whose number was never
 * looked up are asked of the connector, which asks the network through a connected account of the org; the
 * answer is written only if the phone is still the one checked. The work lives in the contacts table
 * (chatnet_checked_at NULL = due, chatnet_check_after = claim and retry time), so a restart resumes and
 * instances share it; contact create and update only commit their row (the trigger's NOTIFY wakes the loop).
 */
export class PhoneCheckWorker {
  private readonly loop: ClaimLoop<PhoneCheckBatch>;
  /** Consecutive misses per org (no account, network failing): the backoff's exponent; reset by any answer. */
  private readonly misses = new Map<string, number>();
  /** When each org may be asked next (per instance; orgs are spread over instances by the claim's random order). */
  private readonly nextAt = new Map<string, number>();
  /** Orgs whose batch this instance is working on: never claimed twice at once, so their pace holds. */
  private readonly inHand = new Set<string>();

  constructor(private readonly o: PhoneCheckOptions) {
    this.loop = new ClaimLoop({
      name: 'chatnet phone check',
      databaseUrl: o.databaseUrl,
      channel: PHONE_CHECK_CHANNEL,
      pollMs: o.pollMs,
      concurrency: o.concurrency,
      claim: (free) =>
        claimPhoneCheckBatches(o.pool, free, o.batchSize, o.batchSize * (o.intervalMs + o.deadlineMs) + o.deadlineMs, [...this.inHand]),
      work: async (batch) => {
        this.inHand.add(batch.orgId);
        try {
          await this.check(batch);
        } finally {
          this.inHand.delete(batch.orgId);
        }
      },
      describe: (batch) => ({ orgId: batch.orgId, contacts: batch.contacts.length }),
      log: o.log,
    });
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async check(batch: PhoneCheckBatch): Promise<void> {
    const { orgId } = batch;
    for (let i = 0; i < batch.contacts.length; i++) {
      const rest = batch.contacts.slice(i).map((c) => c.id);
      if (this.loop.isStopping) return retryPhoneChecksAt(this.o.pool, orgId, rest, new Date());
      const wait = (this.nextAt.get(orgId) ?? 0) - Date.now();
      if (wait > 0) await this.loop.sleep(wait);
      if (this.loop.isStopping) return retryPhoneChecksAt(this.o.pool, orgId, rest, new Date());
      this.nextAt.set(orgId, Date.now() + this.o.intervalMs);
      const contact = batch.contacts[i];
      const answer = await this.o.directory.lookup(orgId, contact.phone, `phone-check-${randomUUID()}`);
      if (answer.kind === 'found' || answer.kind === 'not_found') {
        this.misses.delete(orgId);
        await recordPhoneCheckAnswer(this.o.pool, orgId, contact.id, contact.phone, answer.kind === 'found');
        continue;
      }
      const at = new Date(Date.now() + this.backoff(orgId));
      if (answer.kind === 'no_connected_account') {
        // Every number of the org waits: asking again before an account connects would get the same answer.
        // This batch's claims are given back first (retryOrgPhoneChecksAt only brings retry times forward to `at`).
        await retryPhoneChecksAt(this.o.pool, orgId, rest, at);
        await retryOrgPhoneChecksAt(this.o.pool, orgId, at);
      } else {
        this.o.log.warn(
          { orgId, reason: answer.reason, retryAt: at.toISOString() },
          'chatnet phone check: lookup failed; the org is tried again later',
        );
        await retryPhoneChecksAt(this.o.pool, orgId, rest, at);
      }
      return;
    }
  }

  private backoff(orgId: string): number {
    const n = this.misses.get(orgId) ?? 0;
    this.misses.set(orgId, n + 1);
    return Math.min(this.o.retryMaxMs, this.o.retryBaseMs * 2 ** Math.min(n, 20));
  }
}
