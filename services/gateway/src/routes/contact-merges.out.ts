import type { z } from 'zod';
import type { crm } from '@crm/proto-types';
import type { ContactMerge as ContactMergeSchema } from './contact-merges.schemas';
import { contactOut } from './crm';
import { answered } from '../http/shape';

type ContactMerge = crm.ContactMerge__Output;

/** A merge as the API shows it; its contacts through the one internal contact mapper. */
export function mergeOut(m: ContactMerge): z.input<typeof ContactMergeSchema> {
  // crm sets moved and target on every merge it answers; source only after an undo.
  return {
    id: m.id,
    targetId: m.targetId,
    sourceId: m.sourceId,
    mergedBy: m.mergedBy ?? null,
    mergedAt: m.mergedAt,
    undoableUntil: m.undoableUntil,
    undoneAt: m.undoneAt ?? null,
    filledFields: m.filledFields,
    moved: answered(m.moved, 'crm merge: moved'),
    target: contactOut(answered(m.target, 'crm merge: target')),
    source: m.source ? contactOut(m.source) : null,
  };
}
