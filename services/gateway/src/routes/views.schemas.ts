import { z } from 'zod';
import { s } from '../http/validate';
import { VIEW_RESOURCES } from './views.apply';

const Filters = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean()], { error: 'must be text, a number, or true or false' }), {
    error: 'must be an object of the list’s query parameters',
  })
  .describe(
    'the list’s query parameters (GET /conversations or GET /contacts), without page, limit and viewId; numbers and booleans are kept as text',
  );
export type Filters = z.infer<typeof Filters>;

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

/** A saved view as the API shows it (views.out.ts viewOut is typed by it). */
export const View = z.object({
  id: z.string(),
  name: z.string(),
  resource: z.enum(VIEW_RESOURCES).meta({ description: 'the list it filters: GET /conversations or GET /contacts' }),
  filters: z.record(z.string(), z.string()).meta({ description: 'the list’s query parameters, as text' }),
  shared: z.boolean().meta({ description: 'true: the whole org sees it; false: only its owner' }),
  ownerId: z.string().nullable().meta({ description: 'who made it; null for a shared view made with an API key' }),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** How ?viewId= combines with the request's own parameters (GET /conversations, GET /contacts), for their docs. */
export const VIEW_APPLIED =
  '`viewId` applies a saved view of this list: its filters first, then the request’s own parameters; a parameter given in the request replaces the view’s value of that parameter, ' +
  'and the others narrow it. 404 for a view the caller cannot see (another org’s, another user’s personal one); 400 naming viewId for a view of the other list.';
export const VIEW_ID = z.string().optional().describe('a saved view of this list (GET /views)');
