import { z } from 'zod';
import { ContactQuery } from '../../routes/crm';
import { ContactFieldPatch, ImportQuery, NewContactField } from '../../routes/contact-fields.routes';
import { reply, replyItem } from '../proto-schema';
import { area } from '../registry';

/** Custom contact fields (definitions) and contacts as CSV (crm), internal API. */
const fields = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Custom fields' });
const Field = replyItem('crmFields', 'ListContactFields');
fields.op('GET /contact-fields', { summary: 'The organization’s custom contact fields, by position then key', responses: { 200: z.array(Field) } });
fields.op('POST /contact-fields', {
  summary: 'Define a custom contact field (admin, owner)',
  description: 'type text (≤ 1000 characters), number (finite), date (YYYY-MM-DD), boolean or select (one of `options`). 409 when the key is taken.',
  body: NewContactField,
  responses: { 201: reply('crmFields', 'CreateContactField') },
  errors: [409],
});
fields.op('GET /contact-fields/:id', { summary: 'One custom contact field', responses: { 200: Field } });
fields.op('PUT /contact-fields/:id', {
  summary: 'Change a custom field’s label, options or position (admin, owner); key and type are fixed',
  body: ContactFieldPatch,
  responses: { 200: reply('crmFields', 'UpdateContactField') },
});
fields.op('DELETE /contact-fields/:id', {
  summary: 'Delete a custom field and its values on every contact (admin, owner)',
  responses: { 204: null },
});

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
transfer.op('GET /contacts/export', {
  summary: 'The contacts the list’s filters match, as CSV (streamed)',
  description:
    'Columns name, phone, email, tags (`;`-separated), status, then one per custom field key; UTF-8 with a BOM, CRLF line ends. A cell starting with =, +, -, @, tab or CR ' +
    'is written with a leading apostrophe so spreadsheets do not run it as a formula (the import removes it). Takes the filters of GET /contacts, including `cf.<key>=value`; ' +
    'an agent under “assigned” inbox visibility exports the contacts they see.',
  query: ContactQuery.omit({ sortBy: true, direction: true }),
  responses: { 200: 'csv' },
});

export const contactFieldsOps = [...fields.ops, ...transfer.ops];
