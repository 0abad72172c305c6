import type { HandlersFor } from '@crm/grpc-kit';
import * as fields from './fields';

/** crm.v1.ContactFieldsService: decode, call the use case, return; errors are mapped by grpc-kit. */
export function contactFieldsHandlers(deps: fields.FieldsDeps): HandlersFor<'crm.v1.ContactFieldsService'> {
  return {
    ListContactFields: (_req, ctx) => fields.list(deps, ctx),
    CreateContactField: (req, ctx) => fields.create(deps, ctx, req),
    UpdateContactField: (req, ctx) => fields.update(deps, ctx, req),
    DeleteContactField: (req, ctx) => fields.remove(deps, ctx, req.id),
  };
}
