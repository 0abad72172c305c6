import { Router } from 'express';
import { z } from 'zod';
import type { crm } from '@crm/proto-types';
import type { RouteDeps } from './deps';
import type { ServiceRoutes } from './services';
import { contactOut } from './crm';
import { ctxOf } from '../http/principal';
import { answered } from '../http/shape';
import { body } from '../http/validate';

type ContactMerge = crm.ContactMerge__Output;

export function mergeOut(m: ContactMerge) {
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

// Shape only; crm checks the id (400 naming sourceId when malformed or the target itself, 404 when not the org's).
export const MergeBody = z.object({
  sourceId: z.string({ error: 'is required' }).trim().min(1, 'is required').meta({ description: 'the duplicate merged into this contact, then gone' }),
});

/** Reversible contact merges (crm's ContactMergesService). Team lead and above; crm decides (403 otherwise). */
export function contactMergesRoutes({ clients }: RouteDeps): ServiceRoutes {
  const r = Router();
  const merges = () => clients.crmMerges;

  r.post('/contacts/:id/merge', async (req, res) => {
    const { sourceId } = body(req, MergeBody);
    res.json(mergeOut(await merges().MergeContacts({ targetId: req.params.id, sourceId }, ctxOf(req, res))));
  });
  r.post('/contacts/merges/:mergeId/undo', async (req, res) => {
    res.json(mergeOut(await merges().UndoContactMerge({ mergeId: req.params.mergeId }, ctxOf(req, res))));
  });

  return { internal: r };
}
