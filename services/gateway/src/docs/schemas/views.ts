import { z } from 'zod';
import type { viewOut } from '../../routes/views.out';
import { VIEW_RESOURCES } from '../../routes/views.apply';
import { keysMatch } from './check';

/** A saved view (routes/views.out viewOut). */
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
keysMatch<z.infer<typeof View>, ReturnType<typeof viewOut>>(true);
