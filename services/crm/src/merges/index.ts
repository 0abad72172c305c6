import { GrpcServer, HandlersFor, loadProto, serviceDefinition } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { mergeContacts, undoMerge } from './merges';

/** crm.v1.ContactMergesService: decode, call the domain, return; errors are mapped by grpc-kit. */
export function contactMergesHandlers(deps: Deps): HandlersFor<'crm.v1.ContactMergesService'> {
  return {
    MergeContacts: (req, ctx) => mergeContacts(deps, ctx, req),
    UndoContactMerge: (req, ctx) => undoMerge(deps, ctx, req),
  };
}

/** Contact merges as app.ts wires them: the gRPC service on `server`; no workers. */
export function contactMergesFeature(deps: Deps, server: GrpcServer) {
  server.add(serviceDefinition(loadProto('crm/v1/merges.proto'), 'crm.v1.ContactMergesService'), contactMergesHandlers(deps));
  return { start: async () => undefined, stop: async () => undefined };
}
