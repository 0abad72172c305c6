import { z } from 'zod';
import { routeArea } from '../../http/route-area';
import type { RouteDeps } from '../deps';
import { statusOut } from './contact-statuses.out';
import { NewStatus, Status, StatusPatch } from './contact-statuses.schemas';

/** Custom statuses (contact.statusId); the spec has no way to create them, so these are added. */
export const contactStatusRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Contact statuses' });
const crm = (deps: RouteDeps) => deps.clients.crm;

contactStatusRoutes.route('GET /contact-statuses', {
  summary: 'The organization’s custom contact statuses',
  response: z.array(Status),
  handler: async ({ ctx, deps }) => (await crm(deps).ListContactStatuses({}, ctx)).data.map(statusOut),
});
contactStatusRoutes.route('POST /contact-statuses', {
  summary: 'Create a custom contact status',
  body: NewStatus,
  status: 201,
  response: Status,
  errors: [409],
  handler: async ({ body, ctx, deps }) => statusOut(await crm(deps).CreateContactStatus(body, ctx)),
});
contactStatusRoutes.route('GET /contact-statuses/:id', {
  summary: 'One custom contact status',
  response: Status,
  // The one status asked for (crm counts its contacts alone), not the whole list searched here.
  handler: async ({ param, ctx, deps }) => statusOut(await crm(deps).GetContactStatus({ id: param('id') }, ctx)),
});
contactStatusRoutes.route('PUT /contact-statuses/:id', {
  summary: 'Change a custom contact status',
  body: StatusPatch,
  response: Status,
  errors: [409],
  handler: async ({ param, body, ctx, deps }) => statusOut(await crm(deps).UpdateContactStatus({ id: param('id'), ...body }, ctx)),
});
contactStatusRoutes.route('DELETE /contact-statuses/:id', {
  summary: 'Delete a custom contact status (contacts keep their status text)',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await crm(deps).DeleteContactStatus({ id: param('id') }, ctx);
  },
});
