import type { Request, Response } from 'express';
import type { ClientFor } from '@crm/grpc-kit';
import { badRequest } from '../http/errors';
import { ctxOf } from '../http/principal';

/** The lists a view can filter. */
export const VIEW_RESOURCES = ['conversations', 'contacts'] as const;
export type ViewResource = (typeof VIEW_RESOURCES)[number];
export type ViewsClient = ClientFor<'messaging.v1.ViewsService'>;

/**
 * The list's query parameters with `?viewId=` applied (issue #29 item 8): the view's saved filters first, then the
 * request's own parameters, so a parameter given in the request replaces the view's value of that parameter (others
 * still narrow). Without viewId, the request's parameters as they are. A view the caller may not see (another org's,
 * another user's personal one) is 404; one of the other list is 400 naming viewId. The caller validates the result
 * with the list's schema, as it does without a view.
 */
export async function paramsWithView(
  views: () => ViewsClient,
  req: Request,
  res: Response,
  resource: ViewResource,
): Promise<Record<string, unknown>> {
  const { viewId, ...own } = req.query as Record<string, unknown>;
  if (viewId === undefined || viewId === '') return own;
  if (typeof viewId !== 'string') throw badRequest([{ field: 'viewId', message: 'must be given once' }]);
  const view = await views().GetView({ id: viewId.trim() }, ctxOf(req, res));
  if (view.resource !== resource) throw badRequest([{ field: 'viewId', message: `is a view of ${view.resource}, not of ${resource}` }]);
  return { ...view.filters, ...own };
}
