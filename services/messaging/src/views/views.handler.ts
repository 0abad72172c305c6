import type { HandlersFor } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import * as views from './views';

/** messaging.v1.ViewsService: decode, call the use case, return; errors are mapped by grpc-kit. */
export function viewsHandlers(deps: Deps): HandlersFor<'messaging.v1.ViewsService'> {
  return {
    ListViews: (req, ctx) => views.list(deps, ctx, req),
    GetView: (req, ctx) => views.get(deps, ctx, req),
    CreateView: (req, ctx) => views.create(deps, ctx, req),
    UpdateView: (req, ctx) => views.update(deps, ctx, req),
    DeleteView: (req, ctx) => views.remove(deps, ctx, req),
  };
}
