import type { Options } from 'csv-stringify';
import { stringify } from 'csv-stringify/sync';

/**
 * CSV output for spreadsheets. A cell starting with =, +, -, @, tab or CR would be read as a formula by Excel,
 * LibreOffice or Sheets (CSV injection), so it is written with a leading apostrophe, the usual neutralisation;
 * the import takes that apostrophe off again, so an export imports back to the same values.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

export function neutralise(cell: string): string {
  return FORMULA_START.test(cell) ? `'${cell}` : cell;
}

/** What the import does with a neutralised cell: the apostrophe in front of a formula character goes. */
export function unneutralise(cell: string): string {
  return cell.length > 1 && cell[0] === "'" && FORMULA_START.test(cell.slice(1)) ? cell.slice(1) : cell;
}

/**
 * csv-stringify as exports have always been written: RFC 4180 with CRLF after every record (a cell holding any line
 * end is quoted), cells neutralised before quoting is decided (so `'\tx` needs no quotes), and quotes also around
 * leading or trailing white space (spreadsheets drop it otherwise). Not csv-stringify's own `escape_formulas`: it decides quoting on the
 * cell before its apostrophe, and also neutralises full-width ＝＋－＠, which the import would not give back.
 * A new object each time: csv-stringify fills its defaults into the `cast` object it is given.
 */
export function csvFormat({ bom = false } = {}): Options {
  return { bom, record_delimiter: '\r\n', quote_record_delimiter: true, quoted_match: /^\s|\s$/, cast: { string: neutralise } };
}

/** Records as CSV text, each with its line end; with `bom`, a byte order mark first. */
export function csvText(records: string[][], { bom = false } = {}): string {
  return stringify(records, csvFormat({ bom }));
}
