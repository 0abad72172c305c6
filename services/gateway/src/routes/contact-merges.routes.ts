import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import type { RouteDeps, ServiceRoutes } from './deps';
import { mergeOut } from './contact-merges.out';
import { ContactMerge, MergeBody } from './contact-merges.schemas';

/**
 * Reversible contact merges (crm's ContactMergesService). Team lead and above; crm decides (403 otherwise).
 * Served and documented from these declarations.
 */
export const contactMergeRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Contacts' });
const merges = (deps: RouteDeps) => deps.clients.crmMerges;

contactMergeRoutes.route('POST /contacts/:id/merge', {
  summary: 'Merge a duplicate contact (sourceId) into this one; undoable for 30 days (team lead and above)',
  description:
    'Moves the source’s notes, appointments, tasks, activities, friends and conversations to this contact, fills this contact’s empty ' +
    'fields from the source (non-empty values stay; tags are united), then the source answers 404 and leaves lists. ' +
    'Emits contact.merged. 400 naming sourceId (missing, malformed, or this contact itself).',
  body: MergeBody,
  response: ContactMerge,
  handler: async ({ param, body, ctx, deps }) => mergeOut(await merges(deps).MergeContacts({ targetId: param('id'), sourceId: body.sourceId }, ctx)),
});
contactMergeRoutes.route('POST /contacts/merges/:mergeId/undo', {
  summary: 'Undo a contact merge within 30 days (team lead and above)',
  description:
    'Restores the source as it was, moves back what the merge moved (rows added to the target since stay) and gives back the ' +
    'target fields the merge filled unless edited since. Emits contact.merge_undone. 409 with code merge_already_undone, ' +
    'merge_undo_expired, merge_target_deleted, merge_target_merged (undo the later merge first) or merge_undo_conflict ' +
    '(the source’s phone or chat-network identity belongs to another contact now; details name it).',
  response: ContactMerge,
  errors: [409],
  handler: async ({ param, ctx, deps }) => mergeOut(await merges(deps).UndoContactMerge({ mergeId: param('mergeId') }, ctx)),
});

export function contactMergesRoutes(deps: RouteDeps): ServiceRoutes {
  return { internal: contactMergeRoutes.router(deps, responseContract(deps.config)) };
}
