import type { PoolClient, Queryable } from '@crm/db';
import { eventTraceFields, eventTraceparent, type EventEnvelope } from '@crm/events';
import type { Logger } from '@crm/logger';
import { isUuid } from '../shared';
import type { FamilyModule } from '../events';
import { rescore } from './engine';
import { addedTags, EventFacts, Fact, factsOf } from './facts';
import * as repo from './scoring.repo';
import type { UsedConditions } from './used-conditions';
import type { ScoringConfig } from './model';

const HOUR_MS = 3_600_000;

/** One contact's facts merged into their hour buckets (one row per condition, value and hour). */
export function bucketed(contactId: string, facts: Fact[]): repo.FactRow[] {
  const out = new Map<string, repo.FactRow>();
  for (const f of facts) {
    const bucket = new Date(Math.floor(f.at.getTime() / HOUR_MS) * HOUR_MS);
    const key = `${f.condition}\u0000${f.value}\u0000${bucket.getTime()}`;
    const seen = out.get(key);
    if (seen) {
      seen.occurrences += 1;
      if (f.at > seen.lastAt) seen.lastAt = f.at;
    } else {
      out.set(key, { contactId, condition: f.condition, value: f.value, bucket, occurrences: 1, lastAt: f.at });
    }
  }
  return [...out.values()];
}

/**
 * What one event says about one contact, with the event's time (when its tags were added) and its trace: the one the
 * contact's new score is announced in when this is the contact's last event of the batch.
 */
interface Found extends EventFacts {
  at: Date;
  traceparent: string | undefined;
}

/**
 * message.received / message.sent / appointment.created / contact.created / contact.updated → facts counted
 * for their contacts, and the contacts' scores recomputed at once (so lists sort on a current leadScore). Runs
 * in the consumer's transaction, which also records the event ids: a redelivered event counts nothing twice.
 *
 * Only facts of conditions some rule of the org scores are recorded (see UsedConditions): an org without
 * message rules pays nothing per message. Events that carry nothing for scoring (our own leadScore
 * announcements, updates touching neither tags nor status) are dropped before any query. Per org (in id
 * order), the contacts' rows and state rows are locked in id order, then each contact's events are taken in
 * delivery order: tags an update added are judged against the previous update of the same batch.
 *
 * A contact's score announcement (contact.updated leadScore) continues the trace of its last event here: the writer's
 * call (`traceparent`, for crm's own contact changes), else the consumed event's own (eventTraceparent).
 */
export function scoreEvents(conditions: UsedConditions, log: Logger): FamilyModule {
  return async (events, db, traceparent) => {
    const byOrg = new Map<string, Map<string, Found[]>>();
    for (const event of events) {
      const found = factsOf(event);
      if (!found || (found.facts.length === 0 && !found.snapshot?.tagsChanged)) continue;
      if (!isUuid(event.orgId)) {
        log.warn({ eventId: event.id, type: event.type, ...eventTraceFields(event) }, 'lead scoring: event without a usable orgId; ignored');
        continue;
      }
      const orgId = event.orgId.toLowerCase();
      const contactId = found.contactId.toLowerCase();
      const contacts = byOrg.get(orgId) ?? new Map<string, Found[]>();
      byOrg.set(orgId, contacts);
      const trace = traceparent ?? eventTraceparent(event);
      contacts.set(contactId, [...(contacts.get(contactId) ?? []), { ...found, contactId, at: new Date(event.occurredAt), traceparent: trace }]);
    }
    for (const orgId of [...byOrg.keys()].sort()) await scoreOrg(db, orgId, byOrg.get(orgId)!, await conditions.of(db, orgId));
  };
}

async function scoreOrg(db: PoolClient, orgId: string, byContact: Map<string, Found[]>, used: ReadonlySet<string>): Promise<void> {
  // Tag snapshots are kept even without a tag rule: one added later must compare against the real previous tags.
  const wanted = new Map<string, Found[]>();
  for (const [contactId, list] of byContact) {
    const kept = list
      .map((f) => ({ ...f, facts: f.facts.filter((x) => used.has(x.condition)) }))
      .filter((f) => f.facts.length > 0 || f.snapshot?.tagsChanged);
    if (kept.length > 0) wanted.set(contactId, kept);
  }
  if (wanted.size === 0) return;
  let config: ScoringConfig | undefined;
  const configNow = async () => (config ??= repo.configOf(await repo.findConfig(db, orgId)));
  await settleCreated(db, orgId, wanted, used, configNow);
  if (wanted.size === 0) return;
  // Another org's contacts, or ones deleted meanwhile, are not returned: nothing to score for them.
  const states = await repo.lockStateRows(db, orgId, [...wanted.keys()]);
  const facts: repo.FactRow[] = [];
  const toScore: string[] = [];
  const traces = new Map<string, string | undefined>();
  for (const state of states) {
    const own: Fact[] = [];
    let tags = state.tags;
    let asOf = state.tags_as_of;
    let snapshotMoved = false;
    for (const f of wanted.get(state.contact_id) ?? []) {
      own.push(...f.facts);
      traces.set(state.contact_id, f.traceparent);
      const snap = f.snapshot;
      if (!snap) continue;
      if (used.has('tag_added'))
        for (const tag of addedTags(snap, { tags, asOf }, f.created)) own.push({ condition: 'tag_added', value: tag, at: f.at });
      if (snap.tagsChanged && (!asOf || snap.version >= asOf)) {
        tags = snap.tags;
        asOf = snap.version;
        snapshotMoved = true;
      }
    }
    if (snapshotMoved) await repo.saveTagSnapshot(db, state.contact_id, tags!, asOf!);
    facts.push(...bucketed(state.contact_id, own));
    // Nothing new to count: no new score (a contact never scored is scored once anyway, to its baseScore).
    if (own.length > 0 || !state.scored_at) toScore.push(state.contact_id);
  }
  await repo.addFacts(db, orgId, facts);
  if (toScore.length === 0) return;
  await rescore(db, orgId, toScore, await configNow(), { traceOf: (contactId) => traces.get(contactId) });
}

/**
 * Whether a new contact needs nothing from scoring but its state row (given a baseScore of 0): none of its facts is of
 * a condition some rule of the org scores, and its tags, all "added" at creation, count for no tag rule. The one rule
 * for both ways a contact is created (settleCreated in the writer's transaction, newContactTags before a one-statement
 * create), so the two never disagree.
 */
function onlyStateAtCreation(facts: Fact[], tags: string[], used: ReadonlySet<string>): boolean {
  return !facts.some((f) => used.has(f.condition)) && !(tags.length > 0 && used.has('tag_added'));
}

/**
 * settleCreated's case decided before the contact exists (ContactWriter.createAlone): a contact.created whose facts
 * count for no rule of the org, and whose tags count for none either, needs nothing from scoring but its state row
 * (given a baseScore of 0, which the writer's statement checks). Returns the state row's tag snapshot then, or
 * undefined when the contact must be scored the usual way. The same cache of used conditions as the consumer, so the
 * same staleness after a rule change made through another replica (UsedConditions).
 */
export function newContactTags(conditions: UsedConditions): (db: Queryable, created: EventEnvelope) => Promise<string[] | undefined> {
  return async (db, created) => {
    const found = factsOf(created);
    if (!found?.created || !found.snapshot || !isUuid(created.orgId)) return undefined;
    const used = await conditions.of(db, created.orgId.toLowerCase());
    return onlyStateAtCreation(found.facts, found.snapshot.tags, used) ? found.snapshot.tags : undefined;
  };
}

/**
 * The common case of a contact created in this transaction (the contact writer's): when none of its facts counts
 * for a rule of the org and the org's baseScore is 0, its score is the 0 it was created with, so its state row is
 * written at once, snapshot and all (one statement for the batch), and it leaves `wanted`: no locking, reading,
 * scoring or publishing round trips for it. Any other contact, or one of these that already had a state row or a
 * score, stays in `wanted` and is scored the usual way.
 */
async function settleCreated(
  db: PoolClient,
  orgId: string,
  wanted: Map<string, Found[]>,
  used: ReadonlySet<string>,
  config: () => Promise<ScoringConfig>,
): Promise<void> {
  const created: Array<{ contactId: string; tags: string[]; asOf: Date }> = [];
  for (const [contactId, list] of wanted) {
    if (list.length !== 1 || !list[0].created) continue;
    const tags = list[0].snapshot?.tags ?? [];
    if (!onlyStateAtCreation(list[0].facts, tags, used)) continue;
    created.push({ contactId, tags, asOf: list[0].snapshot?.version ?? list[0].at });
  }
  if (created.length === 0) return;
  let settled: Array<{ contactId: string; scored: boolean }>;
  // One contact (what the API creates): one statement, the org's baseScore checked in it.
  if (created.length === 1) settled = await repo.createStateIfBaseScoreZero(db, orgId, created[0]);
  else if ((await config()).baseScore === 0) settled = await repo.createStates(db, orgId, created, true);
  else return;
  for (const { contactId, scored } of settled) if (scored) wanted.delete(contactId);
}
