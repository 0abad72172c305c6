import { Router } from 'express';
import { z } from 'zod';
import { uncheckedViews } from '../clients';
import type { RouteDeps } from './deps';
import type { ServiceRoutes } from './services';
import { contactOut } from './crm';
import { ctxOf } from '../http/principal';
import { body } from '../http/validate';

type Contact = Parameters<typeof contactOut>[0];

/** crm.v1.ContactMerge. */
interface ContactMerge {
  id: string;
  targetId: string;
  sourceId: string;
  mergedBy?: string;
  mergedAt: string;
  undoableUntil: string;
  undoneAt?: string;
  filledFields: string[];
  moved: { notes: number; appointments: number; activities: number; friends: number; leadLinks: number };
  target: Contact;
  source?: Contact;
}

export function mergeOut(m: ContactMerge) {
  return {
    id: m.id,
    targetId: m.targetId,
    sourceId: m.sourceId,
    mergedBy: m.mergedBy ?? null,
    mergedAt: m.mergedAt,
    undoableUntil: m.undoableUntil,
    undoneAt: m.undoneAt ?? null,
    filledFields: m.filledFields,
    moved: m.moved,
    target: contactOut(m.target),
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
  // Transitional (see uncheckedViews): merges read contacts through crm.routes.ts' shapes, converted after its split.
  const merges = () => uncheckedViews<'crm.v1.ContactMergesService'>(clients.crmMerges);

  r.post('/contacts/:id/merge', async (req, res) => {
    const { sourceId } = body(req, MergeBody);
    res.json(mergeOut(await merges().MergeContacts<ContactMerge>({ targetId: req.params.id, sourceId }, ctxOf(req, res))));
  });
  r.post('/contacts/merges/:mergeId/undo', async (req, res) => {
    res.json(mergeOut(await merges().UndoContactMerge<ContactMerge>({ mergeId: req.params.mergeId }, ctxOf(req, res))));
  });

  return { internal: r };
}
