import type { Pool } from '@crm/db';
import { csvLine, numberCell, textCell, UTF8_BOM } from './csv';
import { reportQuery } from './report-query';
import type { Dimension, ReportSpec } from './report-request';

/** A reason the report cannot be generated as asked; it ends `failed` with this message (not retried). */
export class ReportFailure extends Error {}

export interface GenerateOptions {
  /** Most data rows a report may have; more fails the report (narrow the range, dimensions or filters). */
  maxRows: number;
  /** statement_timeout of the report's query. */
  timeoutMs: number;
  /** Names of the given users, asked for only when the report has the assignedUser dimension. */
  userNames: (ids: string[]) => Promise<Map<string, string>>;
}

/** The gRPC limit of a download response is 32 MB; the file stays well below it. */
export const MAX_CSV_BYTES = 24 * 1024 * 1024;
const FETCH = 1000;

const HEADERS: Record<Dimension, string[]> = {
  source: ['source'],
  status: ['status'],
  assignedUser: ['assigned_user_id', 'assigned_user_name'],
  day: ['day'],
  week: ['week'],
  month: ['month'],
};

type Row = Record<string, string | null>;

/**
 * The report's result rows, read through a cursor FETCH at a time (the row cap stops it early) in a
 * read-only transaction: one consistent snapshot for every row.
 */
async function queryRows(pool: Pool, orgId: string, spec: ReportSpec, opts: GenerateOptions): Promise<Row[]> {
  const { text, values } = reportQuery(orgId, spec);
  const out: Row[] = [];

  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN READ ONLY');
    await client.query(`SET LOCAL statement_timeout = ${Math.floor(opts.timeoutMs)}`);
    await client.query({ text: `DECLARE report_rows NO SCROLL CURSOR FOR ${text}`, values });
    for (;;) {
      const { rows } = await client.query<Row>(`FETCH ${FETCH} FROM report_rows`);
      if (out.length + rows.length > opts.maxRows) {
        throw new ReportFailure(`The report has more than ${opts.maxRows} rows; choose fewer dimensions, a shorter range or more filters`);
      }
      out.push(...rows);
      if (rows.length < FETCH) break;
    }
    await client.query('COMMIT');
  } catch (err) {
    // A connection that cannot even roll back is not given back to the pool.
    await client.query('ROLLBACK').catch(() => (broken = true));
    if ((err as { code?: string }).code === '57014') {
      throw new ReportFailure(
        `The report took longer than ${Math.round(opts.timeoutMs / 1000)} s to compute; choose a shorter range or more filters`,
      );
    }
    throw err;
  } finally {
    client.release(broken);
  }
  return out;
}

/**
 * The report as CSV. User names are asked for after the query, for the assignees its rows name, with no
 * transaction open while identity answers.
 */
export async function generateCsv(pool: Pool, orgId: string, spec: ReportSpec, opts: GenerateOptions): Promise<{ csv: string; rowCount: number }> {
  const rows = await queryRows(pool, orgId, spec, opts);
  const userColumn = spec.dimensions.indexOf('assignedUser');
  const ids = userColumn < 0 ? [] : [...new Set(rows.map((r) => r[`d${userColumn}`]).filter((v): v is string => v !== null))];
  const names = ids.length ? await opts.userNames(ids) : new Map<string, string>();

  const header = spec.dimensions.flatMap((d) => HEADERS[d]).concat(spec.metrics);
  const chunks = [UTF8_BOM, csvLine(header)];
  let bytes = 0;
  for (const r of rows) {
    const cells: string[] = [];
    spec.dimensions.forEach((d, i) => {
      const v = r[`d${i}`];
      if (d !== 'assignedUser') return void cells.push(textCell(v));
      // Unassigned contacts have no id; a user identity does not know is shown by id.
      cells.push(textCell(v), textCell(v === null ? 'Unassigned' : (names.get(v) ?? v)));
    });
    spec.metrics.forEach((_, i) => cells.push(numberCell(r[`m${i}`])));
    const line = csvLine(cells);
    bytes += Buffer.byteLength(line);
    if (bytes > MAX_CSV_BYTES)
      throw new ReportFailure(
        `The report is larger than ${MAX_CSV_BYTES / 1024 / 1024} MB; choose fewer dimensions, a shorter range or more filters`,
      );
    chunks.push(line);
  }
  return { csv: chunks.join(''), rowCount: rows.length };
}
