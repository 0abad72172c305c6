import type { Response } from 'express';
import { Router } from 'express';
import { z } from 'zod';
import type { crm } from '@crm/proto-types';
import { importUpload, BASE_COLUMNS } from '../csv/contact-import';
import { csvLine, UTF8_BOM } from '../csv/csv-writer';
import { HttpError } from '../http/errors';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import { contactFieldOut } from './contact-fields.out';
import { ContactField, ContactFieldPatch, ImportQuery, ImportResult, NewContactField } from './contact-fields.schemas';
import { ContactQuery, contactListFilters, customFieldsOf } from './crm';
import type { RouteDeps, ServiceRoutes } from './deps';

// ------------------------------------------------------------------------------------------- shapes from crm

/** The contact columns an export writes. */
type ExportedContact = crm.Contact__Output;

const EXPORT_PAGE = 500;
/** A batch of 500 rows is written in well under a second; the margin covers a busy database. */
const IMPORT_BATCH_DEADLINE_MS = 60_000;

/** Write a chunk, waiting for the socket to drain when its buffer is full; false once the client has gone. */
async function write(res: Response, chunk: string): Promise<boolean> {
  if (res.destroyed) return false;
  if (!res.write(chunk)) {
    await new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  }
  return !res.destroyed;
}

function exportCells(c: ExportedContact, keys: string[]): string[] {
  const custom = customFieldsOf(c);
  return [c.name, c.phone, c.email, c.tags.join(';'), c.status, ...keys.map((k) => (custom[k] === undefined ? '' : String(custom[k])))];
}

// ------------------------------------------------------------------------------------------- routes

/** Custom contact fields (definitions), internal API (bearer): served and documented from these declarations. */
export const contactFieldRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Custom fields' });
const fields = (deps: RouteDeps) => deps.clients.crmFields;
const transfer = (deps: RouteDeps) => deps.clients.crmTransfer;

contactFieldRoutes.route('GET /contact-fields', {
  summary: 'The organization’s custom contact fields, by position then key',
  response: z.array(ContactField),
  handler: async ({ ctx, deps }) => (await fields(deps).ListContactFields({}, ctx)).data.map(contactFieldOut),
});
contactFieldRoutes.route('POST /contact-fields', {
  summary: 'Define a custom contact field (admin, owner)',
  description: 'type text (≤ 1000 characters), number (finite), date (YYYY-MM-DD), boolean or select (one of `options`). 409 when the key is taken.',
  body: NewContactField,
  status: 201,
  response: ContactField,
  errors: [409],
  handler: async ({ body: { options: o, ...b }, ctx, deps }) =>
    contactFieldOut(await fields(deps).CreateContactField({ ...b, options: o ? { values: o } : undefined }, ctx)),
});
contactFieldRoutes.route('GET /contact-fields/:id', {
  summary: 'One custom contact field',
  response: ContactField,
  handler: async ({ param, ctx, deps }) => {
    const all = await fields(deps).ListContactFields({}, ctx);
    const found = all.data.find((f) => f.id === param('id'));
    if (!found) throw new HttpError(404, 'not_found', 'Custom field not found');
    return contactFieldOut(found);
  },
});
contactFieldRoutes.route('PUT /contact-fields/:id', {
  summary: 'Change a custom field’s label, options or position (admin, owner); key and type are fixed',
  body: ContactFieldPatch,
  response: ContactField,
  handler: async ({ param, body: { options: o, ...b }, ctx, deps }) =>
    contactFieldOut(await fields(deps).UpdateContactField({ id: param('id'), ...b, options: o ? { values: o } : undefined }, ctx)),
});
contactFieldRoutes.route('DELETE /contact-fields/:id', {
  summary: 'Delete a custom field and its values on every contact (admin, owner)',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await fields(deps).DeleteContactField({ id: param('id') }, ctx);
  },
});

/** Contacts as CSV, out: the list's filters; each page is written as it arrives, so the gateway holds one page at most. */
export const contactExportRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Contacts' });
contactExportRoutes.route('GET /contacts/export', {
  summary: 'The contacts the list’s filters match, as CSV (streamed)',
  description:
    'Columns name, phone, email, tags (`;`-separated), status, then one per custom field key; UTF-8 with a BOM, CRLF line ends. A cell starting with =, +, -, @, tab or CR ' +
    'is written with a leading apostrophe so spreadsheets do not run it as a formula (the import removes it). Takes the filters of GET /contacts, including `cf.<key>=value`; ' +
    'an agent under “assigned” inbox visibility exports the contacts they see.',
  // contacts:export (team lead and above) is crm's rule; checked here too so an agent gets a JSON 403, not a CSV.
  permission: 'contacts:export',
  query: ContactQuery.omit({ sortBy: true, direction: true }),
  response: 'csv',
  handler: async ({ req, res, ctx, deps }) => {
    const { log } = deps;
    const filters = contactListFilters(req);
    const keys = (await fields(deps).ListContactFields({}, ctx)).data.map((f) => f.key);
    const page = (afterId: string) => transfer(deps).ExportContacts({ filters, afterId, limit: EXPORT_PAGE }, ctx);
    // The first page is read before the headers go out, so a bad filter is still a JSON 400.
    let current = await page('');
    res.status(200).set({
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="contacts-${new Date().toISOString().slice(0, 10)}.csv"`,
      'cache-control': 'no-store',
    });
    let exported = 0;
    try {
      if (!(await write(res, UTF8_BOM + csvLine([...BASE_COLUMNS, ...keys])))) return;
      for (;;) {
        const rows = current.data ?? [];
        exported += rows.length;
        if (!(await write(res, rows.map((c) => csvLine(exportCells(c, keys))).join('')))) return;
        if (!current.nextAfter) break;
        current = await page(current.nextAfter);
      }
      res.end();
    } catch (err) {
      // The CSV has begun: there is no status left to send, only a cut connection that says it is incomplete.
      log.error({ err, requestId: res.locals.requestId }, 'contacts export failed mid-stream');
      res.destroy();
      return;
    }
    await transfer(deps)
      .RecordContactTransfer({ kind: 'export', exported, filtersJson: JSON.stringify(filters) }, ctx)
      .catch((err: unknown) => log.warn({ err, requestId: res.locals.requestId }, 'recording the export in the audit log failed'));
  },
});

/**
 * Contacts from CSV, in: streamed, its multipart body parsed as it arrives, so it is served by the stream router before
 * the JSON body parser, behind its own bearer check.
 */
export const contactImportRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Contacts', middleware: (deps) => [deps.auth.bearer] });
contactImportRoutes.route('POST /contacts/import', {
  summary: 'Import contacts from a CSV file (multipart/form-data, field `file`; team lead, admin, owner)',
  description:
    'Header row with any of name, phone, email, tags (separated by `;`), status and the organization’s custom field keys; read as a stream. ' +
    'Up to 50,000 data rows and 64 MB by default (CONTACTS_IMPORT_MAX_ROWS, CONTACTS_IMPORT_MAX_BYTES): past either the rest is not imported and the cut is listed in `errors` (field `file`), still a 200. ' +
    'A row matches a contact by phone, then by email, and updates it with its non-empty cells; otherwise it creates one (source import). A bad row is listed in ' +
    '`errors` (`line` is the file’s line, the header being line 1; `field` the column) and not imported. `dryRun=true` reports the same counts and writes nothing. ' +
    'A header naming an unknown column, or a request without the file, is a 400 before anything is imported.',
  permission: 'contacts:import',
  query: ImportQuery,
  body: 'file',
  response: ImportResult,
  handler: async ({ req, res, query, ctx, deps }) => {
    const { config, log } = deps;
    const dryRun = query.dryRun === 'true';
    const keys = (await fields(deps).ListContactFields({}, ctx)).data.map((f) => f.key);
    const summary = await importUpload(req, {
      customKeys: new Set(keys),
      limits: { maxRows: config.CONTACTS_IMPORT_MAX_ROWS, maxBytes: config.CONTACTS_IMPORT_MAX_BYTES },
      send: (rows) => transfer(deps).ImportContacts({ rows, dryRun }, ctx, { deadlineMs: IMPORT_BATCH_DEADLINE_MS }),
    });
    if (!dryRun) {
      await transfer(deps)
        .RecordContactTransfer({ kind: 'import', created: summary.created, updated: summary.updated, failed: summary.failed }, ctx)
        .catch((err: unknown) => log.warn({ err, requestId: res.locals.requestId }, 'recording the import in the audit log failed'));
    }
    return summary;
  },
});

/** Custom contact fields and contacts as CSV. */
export function contactFieldsRoutes(deps: RouteDeps): ServiceRoutes {
  const contract = responseContract(deps.config);
  return {
    internal: Router().use(contactFieldRoutes.router(deps, contract), contactExportRoutes.router(deps, contract)),
    stream: contactImportRoutes.router(deps, contract),
  };
}
