import type { HandlersFor } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { exportPage, recordTransfer } from './export';
import { importBatch } from './import';

/** crm.v1.ContactTransferService: decode, call the use case, return; errors are mapped by grpc-kit. */
export function contactTransferHandlers(deps: Deps): HandlersFor<'crm.v1.ContactTransferService'> {
  return {
    ImportContacts: (req, ctx) => importBatch(deps, ctx, req),
    ExportContacts: (req, ctx) => exportPage(deps, ctx, req),
    RecordContactTransfer: (req, ctx) => recordTransfer(deps, ctx, req),
  };
}
