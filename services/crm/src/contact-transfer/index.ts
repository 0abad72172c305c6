import { GrpcServer, loadProto, serviceDefinition } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { contactTransferHandlers } from './transfer.handler';

/**
 * CSV import and export as app.ts wires them: crm.v1.ContactTransferService. The gateway reads and writes the
 * CSV as a stream and calls this in batches, so neither process ever holds a whole file.
 */
export function contactTransferFeature(deps: Deps, server: GrpcServer): void {
  server.add(serviceDefinition(loadProto('crm/v1/contact-fields.proto'), 'crm.v1.ContactTransferService'), contactTransferHandlers(deps));
}
