/**
 * CSV as RFC 4180 writes it (CRLF line ends, a field quoted when it holds a comma, quote, CR or LF, quotes
 * doubled), made safe to open in a spreadsheet: a text cell starting with = + - @ (or tab / CR) would be
 * read as a formula, so it gets a leading apostrophe (OWASP "CSV injection"). Numbers are written as
 * computed and never get one.
 */

/** Excel reads a UTF-8 file as UTF-8 only with this mark first (names here are often Vietnamese). */
export const UTF8_BOM = '\uFEFF';
export const CRLF = '\r\n';

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

function quoted(s: string): string {
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A text cell: user-controlled text, neutralised when it would start a formula. */
export function textCell(value: string | null | undefined): string {
  const s = value ?? '';
  return quoted(FORMULA_START.test(s) ? `'${s}` : s);
}

/** A number cell as PostgreSQL printed it (exact decimals); null is an empty cell. */
export function numberCell(value: string | number | null | undefined): string {
  return value === null || value === undefined ? '' : String(value);
}

export function csvLine(cells: string[]): string {
  return cells.join(',') + CRLF;
}
