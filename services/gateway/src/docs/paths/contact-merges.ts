import { z } from 'zod';
import type { mergeOut } from '../../routes/contact-merges.out';
import { MergeBody } from '../../routes/contact-merges.routes';
import { area } from '../registry';
import { keysMatch } from '../schemas/check';
import { Contact } from '../schemas/crm';

/** contact-merges.out mergeOut. */
const ContactMerge = z.object({
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
keysMatch<z.infer<typeof ContactMerge>, ReturnType<typeof mergeOut>>(true);

const merges = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Contacts' });
merges.op('POST /contacts/:id/merge', {
  summary: 'Merge a duplicate contact (sourceId) into this one; undoable for 30 days (team lead and above)',
  description:
    'Moves the source’s notes, appointments, tasks, activities, friends and conversations to this contact, fills this contact’s empty ' +
    'fields from the source (non-empty values stay; tags are united), then the source answers 404 and leaves lists. ' +
    'Emits contact.merged. 400 naming sourceId (missing, malformed, or this contact itself).',
  body: MergeBody,
  responses: { 200: ContactMerge },
});
merges.op('POST /contacts/merges/:mergeId/undo', {
  summary: 'Undo a contact merge within 30 days (team lead and above)',
  description:
    'Restores the source as it was, moves back what the merge moved (rows added to the target since stay) and gives back the ' +
    'target fields the merge filled unless edited since. Emits contact.merge_undone. 409 with code merge_already_undone, ' +
    'merge_undo_expired, merge_target_deleted, merge_target_merged (undo the later merge first) or merge_undo_conflict ' +
    '(the source’s phone or chat-network identity belongs to another contact now; details name it).',
  responses: { 200: ContactMerge },
  errors: [409],
});

export const contactMergeOps = merges.ops;
