import type { Response } from 'express';
import { Router } from 'express';
import { z } from 'zod';
import type { crm } from '@crm/proto-types';
import { crmRules as rules } from '@crm/validation';
import { importUpload, BASE_COLUMNS } from '../csv/contact-import';
import { csvLine, UTF8_BOM } from '../csv/csv-writer';
import { badRequest, HttpError } from '../http/errors';
import { requirePermission } from '../http/permission';
import { ctxOf } from '../http/principal';
import { body, s } from '../http/validate';
import { contactFieldOut } from './contact-fields.out';
import { contactListFilters, customFieldsOf, position } from './crm';
import type { RouteDeps, ServiceRoutes } from './deps';

// ------------------------------------------------------------------------------------------- shapes from crm

/** The contact columns an export writes. */
type ExportedContact = crm.Contact__Output;

// ------------------------------------------------------------------------------------------- request schemas

const options = z
  .array(z.string({ error: 'must be an array of strings' }).trim().min(1, rules.EMPTY_OPTION).max(rules.OPTION_MAX, rules.OPTION_TOO_LONG), {
    error: 'must be an array of strings',
  })
  .max(rules.MAX_OPTIONS, rules.TOO_MANY_OPTIONS);

export const NewContactField = z.object({
  key: z.string({ error: 'is required' }).trim().regex(rules.FIELD_KEY_PATTERN, rules.FIELD_KEY_MESSAGE),
  label: s.requiredText(rules.FIELD_LABEL_MAX),
  type: s.enumOf(rules.FIELD_TYPES),
  options: options.optional(),
  position: position.optional(),
});
// key and type are fixed once created (crm answers 400 when they differ); sending the same ones is harmless.
export const ContactFieldPatch = z.object({
  key: z.string().optional(),
  label: s.requiredText(rules.FIELD_LABEL_MAX).optional(),
  type: z.string().optional(),
  options: options.optional(),
  position: position.optional(),
});

export const ImportQuery = z.object({ dryRun: s.optionalQueryEnum(['true', 'false'] as const) });

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

/**
 * Custom contact fields (definitions), and contacts as CSV: import (streamed, before the JSON body parser) and
 * export (streamed out). Mounted before the crm routes so /contacts/export is not taken for a contact id.
 */
export function contactFieldsRoutes({ config, clients, auth, log }: RouteDeps): ServiceRoutes {
  const internal = Router();
  const stream = Router();
  const fields = () => clients.crmFields;
  const transfer = () => clients.crmTransfer;

  internal.get('/contact-fields', async (req, res) => {
    res.json((await fields().ListContactFields({}, ctxOf(req, res))).data.map(contactFieldOut));
  });
  internal.post('/contact-fields', async (req, res) => {
    const { options: o, ...b } = body(req, NewContactField);
    res.status(201).json(contactFieldOut(await fields().CreateContactField({ ...b, options: o ? { values: o } : undefined }, ctxOf(req, res))));
  });
  internal.get('/contact-fields/:id', async (req, res) => {
    const all = await fields().ListContactFields({}, ctxOf(req, res));
    const found = all.data.find((f) => f.id === req.params.id);
    if (!found) throw new HttpError(404, 'not_found', 'Custom field not found');
    res.json(contactFieldOut(found));
  });
  internal.put('/contact-fields/:id', async (req, res) => {
    const { options: o, ...b } = body(req, ContactFieldPatch);
    res.json(
      contactFieldOut(await fields().UpdateContactField({ id: req.params.id, ...b, options: o ? { values: o } : undefined }, ctxOf(req, res))),
    );
  });
  internal.delete('/contact-fields/:id', async (req, res) => {
    await fields().DeleteContactField({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });

  // The list's filters; each page is written as it arrives, so the gateway holds one page at most.
  // contacts:export (team lead and above) is crm's rule; checked here too so an agent gets a JSON 403, not a CSV.
  internal.get('/contacts/export', requirePermission('contacts:export'), async (req, res) => {
    const filters = contactListFilters(req);
    const ctx = ctxOf(req, res);
    const keys = (await fields().ListContactFields({}, ctx)).data.map((f) => f.key);
    const page = (afterId: string) => transfer().ExportContacts({ filters, afterId, limit: EXPORT_PAGE }, ctx);
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
    await transfer()
      .RecordContactTransfer({ kind: 'export', exported, filtersJson: JSON.stringify(filters) }, ctx)
      .catch((err: unknown) => log.warn({ err, requestId: res.locals.requestId }, 'recording the export in the audit log failed'));
  });

  // Streamed: the multipart body is parsed here as it arrives (no body parser may run first).
  stream.post('/contacts/import', auth.bearer, requirePermission('contacts:import'), async (req, res) => {
    const q = ImportQuery.safeParse(req.query);
    if (!q.success) throw badRequest([{ field: 'dryRun', message: 'must be true or false' }]);
    const dryRun = q.data.dryRun === 'true';
    const ctx = ctxOf(req, res);
    const keys = (await fields().ListContactFields({}, ctx)).data.map((f) => f.key);
    const summary = await importUpload(req, {
      customKeys: new Set(keys),
      limits: { maxRows: config.CONTACTS_IMPORT_MAX_ROWS, maxBytes: config.CONTACTS_IMPORT_MAX_BYTES },
      send: (rows) => transfer().ImportContacts({ rows, dryRun }, ctx, { deadlineMs: IMPORT_BATCH_DEADLINE_MS }),
    });
    if (!dryRun) {
      await transfer()
        .RecordContactTransfer({ kind: 'import', created: summary.created, updated: summary.updated, failed: summary.failed }, ctx)
        .catch((err: unknown) => log.warn({ err, requestId: res.locals.requestId }, 'recording the import in the audit log failed'));
    }
    res.json(summary);
  });

  return { internal, stream };
}
