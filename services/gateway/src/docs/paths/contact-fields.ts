import { ImportQuery } from '../../routes/contact-fields.schemas';
import { reply } from '../proto-schema';
import { area } from '../registry';

/**
 * The contacts CSV import (crm), internal API. Streamed before the JSON body parser with a multipart body, it is a
 * plain express route (routes/contact-fields.routes.ts) rather than a route-area declaration, so it is described here.
 */
const ImportResult = reply('crmTransfer', 'ImportContacts');
const transfer = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Contacts' });
transfer.op('POST /contacts/import', {
  summary: 'Import contacts from a CSV file (multipart/form-data, field `file`; team lead, admin, owner)',
  description:
    'Header row with any of name, phone, email, tags (separated by `;`), status and the organization’s custom field keys; read as a stream. ' +
    'Up to 50,000 data rows and 64 MB by default (CONTACTS_IMPORT_MAX_ROWS, CONTACTS_IMPORT_MAX_BYTES): past either the rest is not imported and the cut is listed in `errors` (field `file`), still a 200. ' +
    'A row matches a contact by phone, then by email, and updates it with its non-empty cells; otherwise it creates one (source import). A bad row is listed in ' +
    '`errors` (`line` is the file’s line, the header being line 1; `field` the column) and not imported. `dryRun=true` reports the same counts and writes nothing. ' +
    'A header naming an unknown column, or a request without the file, is a 400 before anything is imported.',
  query: ImportQuery,
  body: 'file',
  responses: { 200: ImportResult },
});

export const contactImportOps = transfer.ops;
