import type { EventHandler } from '@crm/events';
import type { Logger } from '@crm/logger';
import { isUuid } from '../domain/validation';
import { rescore } from './engine';
import { addedTags, Fact, factsOf } from './facts';
import * as repo from './scoring.repo';

const HOUR_MS = 3_600_000;

/** Facts of one event merged into their hour buckets (one row per condition, value and hour). */
export function bucketed(facts: Fact[]) {
  const out = new Map<string, { condition: string; value: string; bucket: Date; occurrences: number; lastAt: Date }>();
  for (const f of facts) {
    const bucket = new Date(Math.floor(f.at.getTime() / HOUR_MS) * HOUR_MS);
    const key = `${f.condition}\u0000${f.value}\u0000${bucket.getTime()}`;
    const seen = out.get(key);
    if (seen) {
      seen.occurrences += 1;
      if (f.at > seen.lastAt) seen.lastAt = f.at;
    } else {
      out.set(key, { condition: f.condition, value: f.value, bucket, occurrences: 1, lastAt: f.at });
    }
  }
  return [...out.values()];
}

/**
 * message.received / message.sent / appointment.created / contact.created / contact.updated → facts counted
 * for the contact, and its score recomputed at once (so lists sort on a current leadScore). Runs in the
 * consumer's transaction, which also records the event id: a redelivered event counts nothing twice. The
 * contact's state row is locked first, so two events of one contact are scored one after the other.
 */
export function scoringEventHandler(log: Logger): EventHandler {
  return async (event, db) => {
    if (!db || !isUuid(event.orgId)) {
      log.warn({ eventId: event.id, type: event.type }, 'lead scoring: event without a usable orgId; ignored');
      return;
    }
    const found = factsOf(event);
    // Contact updates that touch neither tags nor status (our own leadScore announcements among them).
    if (!found || (found.facts.length === 0 && !found.snapshot?.tagsChanged)) return;
    const orgId = event.orgId;
    // Another org's contact, or one deleted meanwhile: nothing to score.
    const state = await repo.lockState(db, orgId, found.contactId);
    if (!state) return;
    const facts = [...found.facts];
    const snap = found.snapshot;
    if (snap) {
      const at = new Date(event.occurredAt);
      for (const tag of addedTags(snap, { tags: state.tags, asOf: state.tags_as_of }, found.created)) facts.push({ condition: 'tag_added', value: tag, at });
      if (snap.tagsChanged && (!state.tags_as_of || snap.version >= state.tags_as_of)) await repo.saveTagSnapshot(db, found.contactId, snap.tags, snap.version);
    }
    // Tags changed but none was added: nothing new to count (a contact never scored is scored once anyway).
    if (facts.length === 0 && state.scored_at) return;
    await repo.addFacts(db, orgId, found.contactId, bucketed(facts));
    const config = repo.configOf(await repo.findConfig(db, orgId));
    await rescore(db, orgId, [found.contactId], config);
  };
}
