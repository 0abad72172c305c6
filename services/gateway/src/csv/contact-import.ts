import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { sizeText } from '@crm/config';
import { badRequest } from '../http/errors';
import { CsvReader, type CsvRecord } from './csv-reader';
import { unneutralise } from './csv-writer';

/** Rows per ImportContacts call: big enough to amortise the round trip, small enough to keep both sides' memory flat. */
export const IMPORT_BATCH_ROWS = 500;
/** At most this many errors are listed (each failed row is still counted in `failed`). */
export const IMPORT_MAX_ERRORS = 10_000;

export const BASE_COLUMNS = ['name', 'phone', 'email', 'tags', 'status'] as const;
type BaseColumn = (typeof BASE_COLUMNS)[number];

/** crm.v1.ImportRow. */
export interface ImportRow {
  line: number;
  name: string;
  phone: string;
  email: string;
  tags: string;
  status: string;
  customFields: Record<string, string>;
}

export interface ImportError {
  line: number;
  field: string;
  message: string;
}

export interface ImportSummary {
  created: number;
  updated: number;
  failed: number;
  errors: ImportError[];
}

/** Where each cell of a row goes: a contact column, a custom field key, or nowhere (a column without a name). */
type Column = { base: BaseColumn } | { custom: string } | null;

const fileProblem = (message: string) => badRequest([{ field: 'file', message }]);

/** The header row: known columns and the org's custom field keys, case-insensitively; anything else is a 400. */
export function columnsOf(header: CsvRecord, customKeys: Set<string>): Column[] {
  const seen = new Set<string>();
  const columns = header.cells.map((raw): Column => {
    const name = raw.trim().toLowerCase();
    if (!name) return null;
    if (seen.has(name)) throw fileProblem(`the header names column "${name}" twice`);
    seen.add(name);
    if ((BASE_COLUMNS as readonly string[]).includes(name)) return { base: name as BaseColumn };
    if (customKeys.has(name)) return { custom: name };
    throw fileProblem(`column "${name}" is not a contact field (${BASE_COLUMNS.join(', ')}) or a custom field key of this organization`);
  });
  if (!['name', 'phone', 'email'].some((c) => seen.has(c))) throw fileProblem('the header row must have a name, phone or email column');
  return columns;
}

/** A data row as crm takes it, or the reason it cannot be read. */
export function rowOf(record: CsvRecord, columns: Column[]): ImportRow | ImportError {
  const row: ImportRow = { line: record.line, name: '', phone: '', email: '', tags: '', status: '', customFields: {} };
  for (let i = 0; i < record.cells.length; i++) {
    // Exports neutralise formula-like cells with an apostrophe (csv-writer.ts): it comes off here.
    const value = unneutralise(record.cells[i].trim());
    const column = i < columns.length ? columns[i] : null;
    if (i >= columns.length && value)
      return { line: record.line, field: 'file', message: `the row has ${record.cells.length} cells; the header has ${columns.length}` };
    if (!column) continue;
    if ('base' in column) row[column.base] = value;
    else row.customFields[column.custom] = value;
  }
  return row;
}

/** The upload's `file` part as a stream; a request that is not multipart or has no such part is a 400. */
function filePart(req: IncomingMessage, maxBytes: number): Promise<{ file: Readable; stop(): void; onCut(listener: () => void): void }> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // One byte past the limit: busboy reports the limit when it is reached, so a file of exactly maxBytes would count as cut.
      parser = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { files: 1, fileSize: maxBytes + 1, fields: 10, parts: 20 } });
    } catch {
      return reject(fileProblem('the upload could not be read as multipart/form-data'));
    }
    let found = false;
    // Whatever is left of the request is read and dropped, so the client gets its answer on a healthy connection.
    const stop = () => {
      req.unpipe(parser);
      req.resume();
    };
    parser.on('file', (name, stream) => {
      if (name !== 'file' || found) return stream.resume();
      found = true;
      // busboy can reach the limit in the same write that announced the file, before the caller's code runs on:
      // the limit is remembered from here, so a small file limit is not missed.
      let cut = false;
      stream.once('limit', () => (cut = true));
      resolve({ file: stream, stop, onCut: (listener) => (cut ? listener() : stream.once('limit', listener)) });
    });
    parser.on('error', () => {
      if (!found) {
        stop();
        reject(fileProblem('the upload could not be read as multipart/form-data'));
      }
    });
    parser.on('close', () => {
      if (!found) reject(fileProblem('is required (multipart/form-data, field named file)'));
    });
    req.pipe(parser);
  });
}

/** The cut-offs of one import (gateway config: CONTACTS_IMPORT_MAX_ROWS, CONTACTS_IMPORT_MAX_BYTES). */
export interface ImportLimits {
  /** Data rows imported at most; each row after it is counted as failed, and the first of them listed. */
  maxRows: number;
  /** Bytes of the file read at most; the row the limit cuts through is listed, nothing after it is read. */
  maxBytes: number;
}

export interface ImportOptions {
  customKeys: Set<string>;
  limits: ImportLimits;
  /** One batch to crm (ImportContacts); awaited before more of the file is read, so the upload waits for crm. */
  send(rows: ImportRow[]): Promise<{ created?: number; updated?: number; failed?: number; errors?: ImportError[] }>;
}

/**
 * Reads the uploaded CSV as it arrives, a row at a time, and sends it to crm in batches: the gateway holds one
 * batch at most, whatever the file's size. The header is checked before any row is sent (400). A file that cannot
 * be read on (an unclosed quote, a runaway row, past the size limit) stops there: what came before is imported and
 * the problem is listed with its line.
 */
export async function importUpload(req: IncomingMessage, opts: ImportOptions): Promise<ImportSummary> {
  const { maxRows, maxBytes } = opts.limits;
  const { file, stop, onCut } = await filePart(req, maxBytes);
  const summary: ImportSummary = { created: 0, updated: 0, failed: 0, errors: [] };
  const report = (e: ImportError) => {
    if (summary.errors.length < IMPORT_MAX_ERRORS) summary.errors.push(e);
  };
  const reader = new CsvReader();
  // busboy stops the file at the limit and ends it: the row cut in two is dropped, and listed.
  onCut(() => reader.cut(`the file is larger than ${sizeText(maxBytes)}; the rest was not read`));
  file.on('error', (err) => reader.destroy(err));
  file.pipe(reader);

  let batch: ImportRow[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const out = await opts.send(batch);
    batch = [];
    summary.created += out.created ?? 0;
    summary.updated += out.updated ?? 0;
    summary.failed += out.failed ?? 0;
    for (const e of out.errors ?? []) report(e);
  };

  let columns: Column[] | undefined;
  let rows = 0;
  try {
    for await (const record of reader as AsyncIterable<CsvRecord>) {
      if (record.problem !== undefined) {
        if (!columns) throw fileProblem(`line ${record.line}: ${record.problem}`);
        summary.failed++;
        report({ line: record.line, field: 'file', message: record.problem });
        break;
      }
      if (!columns) {
        columns = columnsOf(record, opts.customKeys);
        continue;
      }
      if (++rows > maxRows) {
        if (rows === maxRows + 1)
          report({
            line: record.line,
            field: 'file',
            message: `the file has more than ${maxRows.toLocaleString('en-US')} rows: this row and the ones after it were not imported`,
          });
        summary.failed++;
        continue;
      }
      const row = rowOf(record, columns);
      if ('message' in row) {
        summary.failed++;
        report(row);
        continue;
      }
      batch.push(row);
      if (batch.length >= IMPORT_BATCH_ROWS) await flush();
    }
  } finally {
    stop();
  }
  if (!columns) throw fileProblem('is empty: the first line must be a header row');
  await flush();
  // Rows the gateway refused and rows crm refused arrive in different orders: the answer lists them by line.
  summary.errors.sort((a, b) => a.line - b.line);
  return summary;
}
