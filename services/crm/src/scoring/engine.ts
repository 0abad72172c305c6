import { Pool, PoolClient, withTransaction } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import { contactIdsAfter, contactsByIds, toEventContact } from '../contacts';
import { INTERVAL_SECONDS, publishRule, ScoringConfig } from './model';
import * as repo from './scoring.repo';

/**
 * Scores written to contacts.lead_score, and the contact.updated events that announce them. Used by the
 * event consumer (one contact), the recompute after a rules/config change and the decay sweep (batches).
 */

/**
 * The trace a contact's score announcement continues: that of the event (or the call) that moved its score, passed
 * explicitly since the service runs without an active context (main.ts); undefined, a trace of its own.
 */
export type TraceOf = (contactId: string) => string | undefined;

/** The background recompute's and the decay sweep's: no call or event caused them, each announcement starts a trace. */
const ownTrace: TraceOf = () => undefined;

/**
 * Publish contact.updated {contact, changes: ['leadScore'], highValueThreshold} for the contacts whose score
 * changed enough (see publishRule), in the caller's transaction (outbox). automation raises the
 * high_value_lead notification from it, judging the score against the org's own threshold carried here.
 * `crossingsOnly` (org-wide recomputes): only threshold crossings now; a rule change moving 100k scores must
 * not become 100k events. The other moves are announced with the contact's next scored event or decay step,
 * since the published score stays what subscribers last saw.
 */
export async function publishScores(
  tx: PoolClient,
  orgId: string,
  contactIds: string[],
  config: ScoringConfig,
  traceOf: TraceOf,
  crossingsOnly = false,
): Promise<number> {
  if (contactIds.length === 0) return 0;
  const rule = publishRule(config);
  const ids = await repo.contactsToPublish(tx, orgId, contactIds, rule, crossingsOnly);
  if (ids.length === 0) return 0;
  for (const row of await contactsByIds(tx, orgId, ids)) {
    await enqueueEvent(tx, {
      type: 'contact.updated',
      orgId,
      data: { contact: toEventContact(row), changes: ['leadScore'], highValueThreshold: rule.threshold },
      traceparent: traceOf(row.id),
    });
  }
  await repo.markPublished(tx, orgId, ids, rule.threshold);
  return ids.length;
}

/**
 * Recompute locked contacts from their facts as of `asOf`, then publish what changed enough, each announcement in the
 * trace `traceOf` names for its contact (none without it).
 */
export async function rescore(
  tx: PoolClient,
  orgId: string,
  contactIds: string[],
  config: ScoringConfig,
  opts: { asOf?: Date; crossingsOnly?: boolean; traceOf?: TraceOf } = {},
): Promise<void> {
  await repo.scoreContacts(tx, orgId, contactIds, config, opts.asOf ?? new Date());
  await publishScores(tx, orgId, contactIds, config, opts.traceOf ?? ownTrace, opts.crossingsOnly);
}

export interface BatchOptions {
  batchSize: number;
  /** Called between batches (lease renewal); a batch is one short transaction. */
  onBatch?: () => Promise<void>;
}

/**
 * Every contact of the org, recomputed with the current rules and config, in keyset batches of short
 * transactions (an org of 100k contacts never holds locks for long). Contacts get a state row on the way.
 */
export async function recomputeOrg(pool: Pool, orgId: string, config: ScoringConfig, opts: BatchOptions): Promise<number> {
  let after: string | null = null;
  let done = 0;
  for (;;) {
    const batch = await withTransaction(pool, async (tx) => {
      const ids = await contactIdsAfter(tx, orgId, after, opts.batchSize);
      if (ids.length === 0) return ids;
      await repo.ensureStates(tx, orgId, ids);
      const locked = await repo.lockStates(tx, orgId, ids);
      await rescore(tx, orgId, locked, config, { crossingsOnly: true, traceOf: ownTrace });
      return ids;
    });
    if (batch.length === 0) return done;
    done += batch.length;
    after = batch[batch.length - 1];
    await opts.onBatch?.();
  }
}

/**
 * The periodic decay sweep: walks the contacts whose contributions are not zero in keyset pages, reading
 * without locks which scores would change at `asOf`; only those are locked (skipping any an event is scoring
 * now), written and considered for publishing. Also prunes facts whose decayed weight fell below
 * PRUNE_FACTOR (a millionth), which bounds storage for any decaying org.
 */
export async function sweepOrg(
  pool: Pool,
  orgId: string,
  config: ScoringConfig,
  opts: BatchOptions & { asOf?: Date },
): Promise<{ changed: number; pruned: number }> {
  const asOf = opts.asOf ?? new Date();
  let after: string | null = null;
  let changed = 0;
  for (;;) {
    const page = await repo.decayPage(pool, orgId, after, opts.batchSize, config, asOf);
    if (!page.lastId) break;
    if (page.changing.length) {
      changed += await withTransaction(pool, async (tx) => {
        const locked = await repo.lockStatesSkipLocked(tx, orgId, page.changing);
        const moved = await repo.decayContacts(tx, orgId, locked, config, asOf);
        await publishScores(tx, orgId, moved, config, ownTrace);
        return moved.length;
      });
    }
    after = page.lastId;
    await opts.onBatch?.();
  }
  let pruned = 0;
  const cutoff = pruneCutoff(config, asOf);
  while (cutoff) {
    const n = await repo.pruneFacts(pool, orgId, cutoff, opts.batchSize);
    pruned += n;
    if (n < opts.batchSize) break;
  }
  return { changed, pruned };
}

const PRUNE_FACTOR = 1e-6;

/** Facts last seen before this weigh less than PRUNE_FACTOR; undefined when nothing decays. */
export function pruneCutoff(config: ScoringConfig, asOf: Date): Date | undefined {
  if (config.decayRate <= 0) return undefined;
  const intervals = Math.log(PRUNE_FACTOR) / Math.log(1 - config.decayRate);
  return new Date(asOf.getTime() - intervals * INTERVAL_SECONDS[config.decayInterval] * 1000);
}
