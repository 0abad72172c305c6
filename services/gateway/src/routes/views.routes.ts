import { badRequest, HttpError } from '../http/errors';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import { parseQuery } from '../http/validate';
import { page } from './common.schemas';
import type { RouteDeps, ServiceRoutes } from './deps';
import { ListQuery } from './chat.routes';
import { ContactQuery, contactFiltersOf } from './crm';
import type { ViewResource } from './views.apply';
import { viewOut } from './views.out';
import { type Filters, NewView, View, ViewPatch, ViewQuery } from './views.schemas';

/** Paging and the view itself are given with each request, never saved in one. */
const NOT_SAVED = ['page', 'limit', 'viewId'];

/** Each list's parameters: which names it takes, and its own check (the one GET /<resource> runs). */
const LISTS: Record<ViewResource, { takes: (name: string) => boolean; check: (params: Record<string, string>) => unknown }> = {
  conversations: { takes: (name) => name in ListQuery.shape, check: (params) => parseQuery(params, ListQuery) },
  contacts: { takes: (name) => name in ContactQuery.shape || name.startsWith('cf.'), check: contactFiltersOf },
};

/**
 * A view's filters as saved: each a parameter the list takes, as text, and together valid for the list (the same
 * check GET /<resource> runs), else 400 naming filters.<param>.
 */
export function savedFilters(resource: ViewResource, filters: Filters): Record<string, string> {
  const list = LISTS[resource];
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(filters)) {
    if (NOT_SAVED.includes(name)) throw badRequest([{ field: `filters.${name}`, message: 'is not saved in a view (give it with each request)' }]);
    if (!list.takes(name)) throw badRequest([{ field: `filters.${name}`, message: `is not a query parameter of GET /${resource}` }]);
    out[name] = String(value);
  }
  try {
    list.check(out);
  } catch (err) {
    if (err instanceof HttpError && err.status === 400 && err.details)
      throw badRequest(err.details.map((d) => ({ field: `filters.${d.field}`, message: d.message })));
    throw err;
  }
  return out;
}

const RULES =
  '`filters` are the list’s query parameters (text, numbers or booleans, kept as text), checked as the list checks them: 400 names `filters.<param>` ' +
  '(page, limit and viewId are given with each request, never saved). A shared view (the whole org sees it) needs team_lead or above to create, change or delete; ' +
  'a personal one is its owner’s alone (404 to everyone else).';

/**
 * Saved views (stored by messaging, issue #29 item 8): the caller's personal views and the org's shared ones (team
 * leads and above write those). GET /conversations?viewId= and GET /contacts?viewId= apply one (views.apply.ts);
 * GET /conversations/counts counts the caller's conversation views. Served and documented from these declarations.
 */
export const viewRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Saved views' });
const views = (deps: RouteDeps) => deps.clients.messagingViews;

viewRoutes.route('GET /views', {
  summary: 'The caller’s personal views and the org’s shared ones, by name',
  query: ViewQuery,
  paging: { limit: 50, max: 100 },
  response: page(View),
  handler: async ({ query, page, ctx, deps }) => {
    const out = await views(deps).ListViews({ ...page, resource: query.resource ?? '' }, ctx);
    return { data: out.data.map(viewOut), pagination: out.pagination! };
  },
});
viewRoutes.route('POST /views', {
  summary: 'Save a view of the conversations or contacts list',
  description: RULES,
  body: NewView,
  status: 201,
  response: View,
  errors: [403],
  handler: async ({ body: b, ctx, deps }) => {
    const filters = savedFilters(b.resource, b.filters ?? {});
    return viewOut(await views(deps).CreateView({ name: b.name, resource: b.resource, shared: b.shared, filters, filtersSet: true }, ctx));
  },
});
viewRoutes.route('GET /views/:id', {
  summary: 'One saved view',
  response: View,
  handler: async ({ param, ctx, deps }) => viewOut(await views(deps).GetView({ id: param('id') }, ctx)),
});
viewRoutes.route('PUT /views/:id', {
  summary: 'Change a saved view (only the fields sent; filters replaced whole)',
  description: `${RULES} The list (resource) of a view does not change.`,
  body: ViewPatch,
  response: View,
  errors: [403],
  handler: async ({ param, body: b, ctx, deps }) => {
    const id = param('id');
    // The filters are checked against the list of the view (404 first when the caller cannot see it).
    const filters = b.filters === undefined ? undefined : savedFilters((await views(deps).GetView({ id }, ctx)).resource as ViewResource, b.filters);
    const out = await views(deps).UpdateView({ id, name: b.name, shared: b.shared, filters: filters ?? {}, filtersSet: filters !== undefined }, ctx);
    return viewOut(out);
  },
});
viewRoutes.route('DELETE /views/:id', {
  summary: 'Delete a saved view',
  status: 204,
  response: null,
  errors: [403],
  handler: async ({ param, ctx, deps }) => {
    await views(deps).DeleteView({ id: param('id') }, ctx);
  },
});

export function viewsRoutes(deps: RouteDeps): ServiceRoutes {
  return { internal: viewRoutes.router(deps, responseContract(deps.config)) };
}
