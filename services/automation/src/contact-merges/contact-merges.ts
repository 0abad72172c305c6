import type { PoolClient } from '@crm/db';
import { eventTraceFields, type ParsedEvent } from '@crm/events';
import type { Logger } from '@crm/logger';
import * as repo from './contact-merges.repo';

/**
 * crm's contact merges, as automation follows them (the triggers consumer, in its transaction). Rows keyed by the
 * source contact move to the target: its rule runs (a waiting run then acts on the contact that exists) and its
 * campaign recipient rows. A campaign reaches one person once: where both contacts are recipients of one campaign
 * the target's row stays the person's, so the source's pending row is set aside (skipped), and the target's pending
 * row is set aside instead when the source's was already sent. Everything is recorded per merge, so the undo moves
 * exactly those rows back. Appointment reminders follow crm's appointment.updated events; lead_scores are the
 * target's own (the source's row stays for its return on undo).
 */

type MergeEvent = ParsedEvent<'contact.merged' | 'contact.merge_undone'>;

function idsOf(event: MergeEvent): repo.MergeIds {
  const d = event.data;
  return {
    mergeId: d.mergeId.toLowerCase(),
    orgId: event.orgId.toLowerCase(),
    targetId: d.targetId.toLowerCase(),
    sourceId: d.sourceId.toLowerCase(),
  };
}

const sourceMarker = (targetId: string) => `Merged into contact ${targetId}, which this campaign reaches instead`;
const targetMarker = (sourceId: string) => `Already sent to contact ${sourceId}, merged into this one`;

export async function applyContactMerged(log: Logger, event: ParsedEvent<'contact.merged'>, db: PoolClient): Promise<void> {
  const m = idsOf(event);
  if (!(await repo.claimMerge(db, m))) return;
  const { orgId, sourceId, targetId } = m;
  const moves: repo.MergeMoves = { runs: await repo.moveRuns(db, orgId, sourceId, targetId), recipients: [], setAside: [] };
  for (const pair of await repo.sharedCampaigns(db, orgId, sourceId, targetId)) {
    const aside =
      pair.source_status === 'pending'
        ? { contactId: sourceId, marker: sourceMarker(targetId) }
        : pair.source_status === 'sent' && pair.target_status === 'pending'
          ? { contactId: targetId, marker: targetMarker(sourceId) }
          : undefined;
    if (!aside) continue;
    const error = await repo.setAside(db, orgId, pair.campaign_id, aside.contactId, aside.marker);
    if (error !== undefined) moves.setAside.push({ campaignId: pair.campaign_id, ...aside, error });
  }
  moves.recipients = await repo.moveRecipients(db, orgId, sourceId, targetId);
  await repo.saveMoves(db, orgId, m.mergeId, moves);
  log.info(
    { ...m, runs: moves.runs.length, recipients: moves.recipients.length, setAside: moves.setAside.length, ...eventTraceFields(event) },
    'automation rows of a merged contact moved',
  );
}

export async function applyContactMergeUndone(log: Logger, event: ParsedEvent<'contact.merge_undone'>, db: PoolClient): Promise<void> {
  const m = idsOf(event);
  const moves = await repo.claimUndo(db, m);
  if (!moves) return;
  const { orgId, sourceId, targetId } = m;
  await repo.moveRunsBack(db, orgId, moves.runs, targetId, sourceId);
  await repo.moveRecipientsBack(db, orgId, moves.recipients, targetId, sourceId);
  for (const s of moves.setAside) await repo.restoreSetAside(db, orgId, s);
  await repo.markUndone(db, orgId, m.mergeId);
  log.info({ ...m, ...eventTraceFields(event) }, 'automation rows of an unmerged contact moved back');
}
