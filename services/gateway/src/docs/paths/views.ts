import { z } from 'zod';
import { NewView, ViewPatch, ViewQuery } from '../../routes/views.routes';
import { area } from '../registry';
import { page } from '../schemas/common';
import { View } from '../schemas/views';

/** How ?viewId= combines with the request's own parameters (GET /conversations, GET /contacts). */
export const VIEW_APPLIED =
  '`viewId` applies a saved view of this list: its filters first, then the request’s own parameters; a parameter given in the request replaces the view’s value of that parameter, ' +
  'and the others narrow it. 404 for a view the caller cannot see (another org’s, another user’s personal one); 400 naming viewId for a view of the other list.';
export const VIEW_ID = z.string().optional().describe('a saved view of this list (GET /views)');

const views = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Saved views' });
const RULES =
  '`filters` are the list’s query parameters (text, numbers or booleans, kept as text), checked as the list checks them: 400 names `filters.<param>` ' +
  '(page, limit and viewId are given with each request, never saved). A shared view (the whole org sees it) needs team_lead or above to create, change or delete; ' +
  'a personal one is its owner’s alone (404 to everyone else).';

views.op('GET /views', {
  summary: 'The caller’s personal views and the org’s shared ones, by name',
  query: ViewQuery,
  paging: { limit: 50, max: 100 },
  responses: { 200: page(View) },
});
views.op('POST /views', {
  summary: 'Save a view of the conversations or contacts list',
  description: RULES,
  body: NewView,
  responses: { 201: View },
  errors: [403],
});
views.op('GET /views/:id', { summary: 'One saved view', responses: { 200: View } });
views.op('PUT /views/:id', {
  summary: 'Change a saved view (only the fields sent; filters replaced whole)',
  description: `${RULES} The list (resource) of a view does not change.`,
  body: ViewPatch,
  responses: { 200: View },
  errors: [403],
});
views.op('DELETE /views/:id', { summary: 'Delete a saved view', responses: { 204: null }, errors: [403] });

export const viewOps = views.ops;
