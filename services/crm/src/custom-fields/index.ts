import { GrpcServer, loadProto, serviceDefinition } from '@crm/grpc-kit';
import type { FieldsDeps } from './fields';
import { contactFieldsHandlers } from './fields.handler';

export { applyChanges, changesForUpdate, listFilter, valuesForNewContact } from './contact-values';
export { fieldDefs } from './fields.repo';
export { type CustomFieldChanges, type CustomFields, type FieldDef, valueFromText, valueToText } from './values';

/** Custom contact fields as app.ts wires them: crm.v1.ContactFieldsService on the service's gRPC server. */
export function contactFieldsFeature(deps: FieldsDeps, server: GrpcServer): void {
  server.add(serviceDefinition(loadProto('crm/v1/contact-fields.proto'), 'crm.v1.ContactFieldsService'), contactFieldsHandlers(deps));
}
