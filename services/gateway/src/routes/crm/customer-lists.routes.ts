import { z } from 'zod';
import { page } from '../common.schemas';
import { routeArea } from '../../http/route-area';
import type { RouteDeps } from '../deps';
import { memberOut } from './contacts.out';
import { MemberContact } from './contacts.schemas';
import { customerListBriefOut, customerListCreatedOut, customerListOut } from './customer-lists.out';
import { CustomerList, CustomerListBrief, CustomerListCreated, CustomerListPatch, criteriaJson, NewCustomerList } from './customer-lists.schemas';

/** Customer lists (saved criteria over contacts, evaluated live; writes need campaigns:manage, which crm checks). */
export const customerListRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Customer lists' });
const crm = (deps: RouteDeps) => deps.clients.crm;

customerListRoutes.route('GET /customer-lists', {
  summary: 'Saved customer lists (criteria over contacts, evaluated live)',
  response: z.array(CustomerListBrief),
  handler: async ({ ctx, deps }) => (await crm(deps).ListCustomerLists({}, ctx)).data.map(customerListBriefOut),
});
customerListRoutes.route('POST /customer-lists', {
  summary: 'Create a customer list (campaigns:manage)',
  body: NewCustomerList,
  status: 201,
  response: CustomerListCreated,
  errors: [409],
  handler: async ({ body: b, ctx, deps }) =>
    customerListCreatedOut(
      await crm(deps).CreateCustomerList({ name: b.name, description: b.description, criteriaJson: criteriaJson(b.criteria) }, ctx),
    ),
});
customerListRoutes.route('GET /customer-lists/:id', {
  summary: 'One customer list with its criteria',
  response: CustomerList,
  handler: async ({ param, ctx, deps }) => customerListOut(await crm(deps).GetCustomerList({ id: param('id') }, ctx)),
});
customerListRoutes.route('PUT /customer-lists/:id', {
  summary: 'Change a customer list (campaigns:manage)',
  body: CustomerListPatch,
  response: CustomerList,
  errors: [409],
  handler: async ({ param, body: b, ctx, deps }) =>
    customerListOut(
      await crm(deps).UpdateCustomerList({ id: param('id'), name: b.name, description: b.description, criteriaJson: criteriaJson(b.criteria) }, ctx),
    ),
});
customerListRoutes.route('DELETE /customer-lists/:id', {
  summary: 'Delete a customer list (campaigns:manage)',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await crm(deps).DeleteCustomerList({ id: param('id') }, ctx);
  },
});
customerListRoutes.route('POST /customer-lists/:id/activate', {
  summary: 'Activate a customer list',
  response: CustomerList,
  errors: [422],
  handler: async ({ param, ctx, deps }) => customerListOut(await crm(deps).ActivateCustomerList({ id: param('id') }, ctx)),
});
customerListRoutes.route('POST /customer-lists/:id/pause', {
  summary: 'Pause a customer list',
  response: CustomerList,
  errors: [422],
  handler: async ({ param, ctx, deps }) => customerListOut(await crm(deps).PauseCustomerList({ id: param('id') }, ctx)),
});
customerListRoutes.route('GET /customer-lists/:id/members', {
  summary: 'The contacts the list’s criteria match now',
  paging: { limit: 50, max: 100 },
  response: page(MemberContact),
  handler: async ({ param, page, ctx, deps }) => {
    const out = await crm(deps).ListCustomerListMembers({ id: param('id'), ...page }, ctx);
    return { data: out.data.map(memberOut), pagination: out.pagination! };
  },
});
