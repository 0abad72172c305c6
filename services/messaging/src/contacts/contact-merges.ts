import type { PoolClient } from '@crm/db';
import { eventTraceFields, type ParsedEvent } from '@crm/events';
import type { Deps } from '../deps';

/** contact.merged / contact.merge_undone with data parsed by its schema (the consumer's parseData): ids are ids. */
export type MergeEvent = ParsedEvent<'contact.merged' | 'contact.merge_undone'>;

/** Ordering key: a merge and the target's own updates are applied in the order crm published them. */
export const mergeEventKey = (event: MergeEvent) => event.data.targetId;

/**
 * crm merged `sourceId` into `targetId`: its conversations (and group messages it sent) now belong to the target,
 * with the target's name, avatar and phone copied in. The moved ids are recorded for an undo. A second delivery
 * finds nothing left to move and records nothing.
 */
export async function applyContactMerged(deps: Deps, db: PoolClient, event: ParsedEvent<'contact.merged'>): Promise<void> {
  const d = event.data;
  const t = d.target;
  await db.query(
    `WITH moved AS (
       UPDATE conversations SET contact_id = $3, contact_name = COALESCE($5, contact_name), contact_avatar = COALESCE($6, contact_avatar),
                                contact_phone = COALESCE($7, contact_phone)
       WHERE org_id = $1 AND contact_id = $2 RETURNING id)
     INSERT INTO contact_merge_moves (merge_id, org_id, kind, row_id) SELECT $4, $1, 'conversation', id FROM moved ON CONFLICT DO NOTHING`,
    [event.orgId, d.sourceId, d.targetId, d.mergeId, t.name ?? null, t.avatar ?? null, t.phone ?? null],
  );
  await db.query(
    `WITH moved AS (UPDATE messages SET sender_contact_id = $3 WHERE org_id = $1 AND sender_contact_id = $2 RETURNING id)
     INSERT INTO contact_merge_moves (merge_id, org_id, kind, row_id) SELECT $4, $1, 'message', id FROM moved ON CONFLICT DO NOTHING`,
    [event.orgId, d.sourceId, d.targetId, d.mergeId],
  );
  deps.senderContacts.forgetContact(event.orgId, d.sourceId);
  deps.log.info(
    { mergeId: d.mergeId, sourceId: d.sourceId, targetId: d.targetId, ...eventTraceFields(event) },
    'conversations of a merged contact relinked',
  );
}

/**
 * crm undid the merge: the recorded conversations and messages that still belong to the target go back to the
 * source (with its copy restored); what was linked to the target since stays.
 */
export async function applyContactMergeUndone(deps: Deps, db: PoolClient, event: ParsedEvent<'contact.merge_undone'>): Promise<void> {
  const d = event.data;
  const s = d.source;
  await db.query(
    `UPDATE conversations c SET contact_id = $3, contact_name = COALESCE($5, c.contact_name), contact_avatar = COALESCE($6, c.contact_avatar),
                                contact_phone = COALESCE($7, c.contact_phone)
     FROM contact_merge_moves m
     WHERE m.merge_id = $4 AND m.org_id = $1 AND m.kind = 'conversation' AND c.id = m.row_id AND c.org_id = $1 AND c.contact_id = $2`,
    [event.orgId, d.targetId, d.sourceId, d.mergeId, s.name ?? null, s.avatar ?? null, s.phone ?? null],
  );
  await db.query(
    `UPDATE messages x SET sender_contact_id = $3 FROM contact_merge_moves m
     WHERE m.merge_id = $4 AND m.org_id = $1 AND m.kind = 'message' AND x.id = m.row_id AND x.org_id = $1 AND x.sender_contact_id = $2`,
    [event.orgId, d.targetId, d.sourceId, d.mergeId],
  );
  deps.senderContacts.forgetContact(event.orgId, d.targetId);
  deps.log.info(
    { mergeId: d.mergeId, sourceId: d.sourceId, targetId: d.targetId, ...eventTraceFields(event) },
    'conversations of an unmerged contact moved back',
  );
}
