/**
 * CSV output for spreadsheets. A cell starting with =, +, -, @, tab or CR would be read as a formula by Excel,
 * LibreOffice or Sheets (CSV injection), so it is written with a leading apostrophe, the usual neutralisation;
 * the import takes that apostrophe off again, so an export imports back to the same values.
 *
 * Written by hand rather than with csv-stringify: set up to write the same bytes, csv-stringify takes 4-5 times the
 * CPU (bench/RESULTS.md, "csv"; services/gateway/README.md, "Design decisions"). csv.test.ts checks that both write
 * the same bytes.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

export function neutralise(cell: string): string {
  return FORMULA_START.test(cell) ? `'${cell}` : cell;
}

/** What the import does with a neutralised cell: the apostrophe in front of a formula character goes. */
export function unneutralise(cell: string): string {
  return cell.length > 1 && cell[0] === "'" && FORMULA_START.test(cell.slice(1)) ? cell.slice(1) : cell;
}

export function csvCell(value: string): string {
  const v = neutralise(value);
  return NEEDS_QUOTES.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** One record with its CRLF line end (RFC 4180). */
export function csvLine(cells: string[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

/** Excel reads a UTF-8 file without a BOM as the local code page (mangling Vietnamese names); the import skips it. */
export const UTF8_BOM = '\uFEFF';
