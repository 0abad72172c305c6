import { z } from 'zod';
import { Contact } from './crm';

// Shape only; crm checks the id (400 naming sourceId when malformed or the target itself, 404 when not the org's).
export const MergeBody = z.object({
  sourceId: z
    .string({ error: 'is required' })
    .trim()
    .min(1, 'is required')
    .meta({ description: 'the duplicate merged into this contact, then gone' }),
});

/** A merge as the API shows it (mergeOut is typed by it). */
export const ContactMerge = z.object({
  id: z.string().meta({ description: 'the merge id, for undo' }),
  targetId: z.string().meta({ description: 'the contact kept' }),
  sourceId: z.string().meta({ description: 'the contact merged into it (404 until the merge is undone)' }),
  mergedBy: z.string().nullable(),
  mergedAt: z.string(),
  undoableUntil: z.string().meta({ description: 'undo answers 409 merge_undo_expired after this (30 days after the merge)' }),
  undoneAt: z.string().nullable(),
  filledFields: z.array(z.string()).meta({ description: 'target fields filled from the source (its non-empty values won); tags: the union' }),
  moved: z.object({
    notes: z.number().int(),
    appointments: z.number().int(),
    activities: z.number().int(),
    friends: z.number().int(),
    leadLinks: z.number().int(),
  }),
  target: Contact,
  source: Contact.nullable().meta({ description: 'after an undo: the source as restored' }),
});
