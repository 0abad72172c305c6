import { z } from 'zod';
import { page } from '../common.schemas';
import { routeArea } from '../../http/route-area';
import type { RouteDeps } from '../deps';
import { VIEW_APPLIED, VIEW_ID } from '../views.schemas';
import { paramsWithView } from '../views.apply';
import { contactOut, detailOut, friendOut } from './contacts.out';
import {
  BulkContacts,
  BulkResult,
  Contact,
  ContactDetail,
  ContactPatch,
  ContactQuery,
  contactFiltersOf,
  customFieldsJson,
  Friend,
  NewContact,
} from './contacts.schemas';

/** Contacts (internal, bearer): list, create, bulk changes, detail, update, delete, friends. */
export const contactRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Contacts' });
const crm = (deps: RouteDeps) => deps.clients.crm;

contactRoutes.route('GET /contacts', {
  summary: 'Contacts of the organization, filtered and sorted',
  description:
    'An agent sees the contacts of the conversations visible to them (inbox visibility). `cf.<key>=value` filters on a custom field (exact match, read by the field’s type; ' +
    '400 naming `cf.<key>` for an unknown key or a value of the wrong type; at most 10). ' +
    VIEW_APPLIED,
  // Parsed by the handler: a saved view's filters first, then the request's own (views.apply.ts).
  query: ContactQuery.extend({ viewId: VIEW_ID }),
  ownQuery: true,
  paging: { limit: 50, max: 100 },
  response: page(Contact),
  handler: async ({ req, res, page, ctx, deps }) => {
    // Saved views (GET /contacts?viewId=) are messaging's.
    const params = await paramsWithView(() => deps.clients.messagingViews, req, res, 'contacts');
    const out = await crm(deps).ListContacts({ ...page, ...contactFiltersOf(params) }, ctx);
    return { data: out.data.map(contactOut), pagination: out.pagination! };
  },
});
contactRoutes.route('POST /contacts', {
  summary: 'Create a contact',
  body: NewContact,
  status: 201,
  response: Contact,
  errors: [409],
  handler: async ({ body: { customFields, ...fields }, ctx, deps }) =>
    contactOut(await crm(deps).CreateContact({ ...fields, customFieldsJson: customFieldsJson(customFields) }, ctx)),
});
contactRoutes.route('POST /contacts/bulk', {
  summary: 'Tag, untag, set status, assign or delete many contacts; each id that fails is listed',
  body: BulkContacts,
  response: BulkResult,
  handler: async ({ body: b, ctx, deps }) => {
    const params =
      b.action === 'tag' || b.action === 'untag'
        ? { tags: b.tags }
        : b.action === 'status'
          ? { status: b.status, statusId: b.statusId }
          : b.action === 'assign'
            ? { assignedUserId: b.assignedUserId ?? '' }
            : {};
    const out = await crm(deps).BulkUpdateContacts({ ids: b.ids, action: b.action, ...params }, ctx);
    return { updated: out.updated, failed: out.failed };
  },
});
contactRoutes.route('GET /contacts/:id', {
  summary: 'One contact with its notes, conversations, appointments and activities',
  response: ContactDetail,
  handler: async ({ param, ctx, deps }) => detailOut(await crm(deps).GetContact({ id: param('id') }, ctx)),
});
contactRoutes.route('PUT /contacts/:id', {
  summary: 'Change a contact; only the fields sent change',
  body: ContactPatch,
  response: Contact,
  errors: [409],
  handler: async ({ param, body: { tags: t, customFields, ...patch }, ctx, deps }) =>
    contactOut(
      await crm(deps).UpdateContact(
        { id: param('id'), ...patch, tags: t ? { values: t } : undefined, customFieldsJson: customFieldsJson(customFields) },
        ctx,
      ),
    ),
});
contactRoutes.route('DELETE /contacts/:id', {
  summary: 'Delete a contact',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await crm(deps).DeleteContact({ id: param('id') }, ctx);
  },
});
contactRoutes.route('GET /contacts/:id/friends', {
  summary: 'The chat-network friends records of a contact',
  response: z.array(Friend),
  handler: async ({ param, ctx, deps }) => (await crm(deps).ListFriends({ id: param('id') }, ctx)).data.map(friendOut),
});
