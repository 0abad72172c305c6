import { Router } from 'express';
import { z } from 'zod';
import type { RouteDeps, ServiceRoutes } from './deps';
import { mergeOut } from './contact-merges.out';
import { ctxOf } from '../http/principal';
import { body } from '../http/validate';

// Shape only; crm checks the id (400 naming sourceId when malformed or the target itself, 404 when not the org's).
export const MergeBody = z.object({
  sourceId: z
    .string({ error: 'is required' })
    .trim()
    .min(1, 'is required')
    .meta({ description: 'the duplicate merged into this contact, then gone' }),
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
