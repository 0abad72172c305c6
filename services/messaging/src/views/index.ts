import { GrpcServer, loadProto, serviceDefinition } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { viewsHandlers } from './views.handler';

/**
 * Saved views (issue #29 item 8): named sets of the conversations or contacts list's query parameters, shared with the
 * org or personal. The gateway applies them (GET /conversations?viewId=, GET /contacts?viewId=); nothing else in
 * messaging reads them.
 */

/** As app.ts wires it: messaging.v1.ViewsService on the service's gRPC server. */
export function viewsFeature(deps: Deps, server: GrpcServer): void {
  server.add(serviceDefinition(loadProto('messaging/v1/views.proto'), 'messaging.v1.ViewsService'), viewsHandlers(deps));
}
