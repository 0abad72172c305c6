import { Router } from 'express';
import { z } from 'zod';
import type { RouteDeps, ServiceRoutes } from './deps';
import { badRequest, HttpError } from '../http/errors';
import { ctxOf } from '../http/principal';
import { body, pageParams, parseQuery, query, s } from '../http/validate';
import { ListQuery } from './chat.routes';
import { ContactQuery, contactFiltersOf } from './crm';
import { VIEW_RESOURCES, type ViewResource } from './views.apply';
import { viewOut } from './views.out';

/** Paging and the view itself are given with each request, never saved in one. */
const NOT_SAVED = ['page', 'limit', 'viewId'];

/** Each list's parameters: which names it takes, and its own check (the one GET /<resource> runs). */
const LISTS: Record<ViewResource, { takes: (name: string) => boolean; check: (params: Record<string, string>) => unknown }> = {
  conversations: { takes: (name) => name in ListQuery.shape, check: (params) => parseQuery(params, ListQuery) },
  contacts: { takes: (name) => name in ContactQuery.shape || name.startsWith('cf.'), check: contactFiltersOf },
};

const Filters = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean()], { error: 'must be text, a number, or true or false' }), {
    error: 'must be an object of the list’s query parameters',
  })
  .describe(
    'the list’s query parameters (GET /conversations or GET /contacts), without page, limit and viewId; numbers and booleans are kept as text',
  );

export const NewView = z.object({
  name: s.requiredText(100),
  resource: s.enumOf(VIEW_RESOURCES),
  filters: Filters.optional(),
  shared: z.boolean({ error: 'is required (true or false)' }),
});
export const ViewPatch = z.object({
  name: s.requiredText(100).optional(),
  filters: Filters.optional(),
  shared: z.boolean({ error: 'must be true or false' }).optional(),
});
export const ViewQuery = z.object({ resource: s.optionalQueryEnum(VIEW_RESOURCES).describe('only the views of this list') });

/**
 * A view's filters as saved: each a parameter the list takes, as text, and together valid for the list (the same
 * check GET /<resource> runs), else 400 naming filters.<param>.
 */
export function savedFilters(resource: ViewResource, filters: z.infer<typeof Filters>): Record<string, string> {
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

/**
 * Saved views (stored by messaging, issue #29 item 8): the caller's personal views and the org's shared ones (team
 * leads and above write those). GET /conversations?viewId= and GET /contacts?viewId= apply one (views.apply.ts);
 * GET /conversations/counts counts the caller's conversation views.
 */
export function viewsRoutes({ clients }: RouteDeps): ServiceRoutes {
  const internal = Router();
  const views = () => clients.messagingViews;

  internal.get('/views', async (req, res) => {
    const { resource } = query(req, ViewQuery);
    const out = await views().ListViews({ ...pageParams(req, 50, 100), resource: resource ?? '' }, ctxOf(req, res));
    res.json({ data: out.data.map(viewOut), pagination: out.pagination });
  });
  internal.post('/views', async (req, res) => {
    const b = body(req, NewView);
    const filters = savedFilters(b.resource, b.filters ?? {});
    const out = await views().CreateView({ name: b.name, resource: b.resource, shared: b.shared, filters, filtersSet: true }, ctxOf(req, res));
    res.status(201).json(viewOut(out));
  });
  internal.get('/views/:id', async (req, res) => {
    res.json(viewOut(await views().GetView({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.put('/views/:id', async (req, res) => {
    const b = body(req, ViewPatch);
    const ctx = ctxOf(req, res);
    // The filters are checked against the list of the view (404 first when the caller cannot see it).
    const filters =
      b.filters === undefined ? undefined : savedFilters((await views().GetView({ id: req.params.id }, ctx)).resource as ViewResource, b.filters);
    const out = await views().UpdateView(
      { id: req.params.id, name: b.name, shared: b.shared, filters: filters ?? {}, filtersSet: filters !== undefined },
      ctx,
    );
    res.json(viewOut(out));
  });
  internal.delete('/views/:id', async (req, res) => {
    await views().DeleteView({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });

  return { internal };
}
