import { CsvError as ParseError, Parser, type Options } from 'csv-parse';
import type { TransformCallback } from 'node:stream';

/**
 * One CSV record: its cells and the file's line where it starts (line 1 is the first line). A record with a
 * `problem` is the last one: the file could not be read on from that line (its cells are empty).
 */
export interface CsvRecord {
  line: number;
  cells: string[];
  problem?: string;
}

/**
 * A record longer than this is refused: it is almost always a quote left open that swallows the rest of the file.
 * (csv-parse counts the cells already read in characters and the one being read in bytes.)
 */
export const MAX_RECORD_CHARS = 256 * 1024;
const MAX_CELLS = 500;

/** Our words for csv-parse's errors (the ones these options can raise); clients have always seen these. */
const PROBLEMS: Record<string, string> = {
  CSV_QUOTE_NOT_CLOSED: 'a quoted cell is not closed before the end of the file',
  CSV_MAX_RECORD_SIZE: `a row is longer than ${MAX_RECORD_CHARS} characters (is a quote left open?)`,
};
const TOO_MANY_CELLS = `a row has more than ${MAX_CELLS} cells`;

const LINE_END = /\r\n|\r|\n/g;
const CR = 0x0d;
const LF = 0x0a;

/**
 * The import's CSV dialect, read by csv-parse (streaming, RFC 4180): bytes in (UTF-8, with or without a BOM; a
 * UTF-16LE BOM makes csv-parse read UTF-16LE), records out (object mode), a chunk at a time, so memory stays flat
 * whatever the file's size. Quoted cells with commas, escaped quotes ("") and line breaks; CRLF, LF and lone CR line
 * ends, mixed in one file (csv-parse would otherwise settle on the first kind it sees). Lenient where files in the
 * wild are sloppy: a quote inside an unquoted cell, or text after a closing quote, is kept as text.
 */
const DIALECT: Options = {
  bom: true,
  record_delimiter: ['\r\n', '\n', '\r'],
  relax_quotes: true,
  // Rows shorter or longer than the header are the import's to judge (rowOf), with the row's own line.
  relax_column_count: true,
  max_record_size: MAX_RECORD_CHARS,
  // Past MAX_CELLS cells the rest of the row is one cell that max_record_size bounds: a line of commas cannot
  // grow a record without limit (csv-parse counts no delimiters towards max_record_size).
  ignore_last_delimiters: MAX_CELLS + 1,
};

/** Line ends inside a record's cells (only quoted cells hold them): CRLF, LF or a lone CR each end one line of the file. */
function lineEndsIn(cells: string[]): number {
  let count = 0;
  for (const cell of cells) {
    if (cell.includes('\n') || cell.includes('\r')) count += cell.match(LINE_END)!.length;
  }
  return count;
}

/**
 * csv-parse with what the import needs on top: each record's line (csv-parse counts CRLF inside a quoted cell as two
 * lines, and gives the line where a record ends, not where it starts), blank lines dropped, and a file that cannot be
 * read on ends with a problem record rather than a stream error: an error would discard the records still buffered
 * for the consumer, and those (the rows before the problem) are good.
 */
export class CsvReader extends Parser {
  /** The line the next record starts on. */
  private line = 1;
  /** Set once a problem record went out: the rest of the input is ignored. */
  private failed = false;
  /** Why the input ends early (cut at a size limit): the record in progress is then dropped, not read. */
  private cutShort?: string;
  private lastByte?: number;
  /** While a cut input's end is read: the records of that last read, held until the one in progress is known. */
  private held?: string[][];

  constructor() {
    super(DIALECT);
  }

  /**
   * The input will end before the file does (e.g. at an upload size limit): the record in progress at the end is
   * not read, and a problem record with `message` ends the output instead.
   */
  cut(message: string): void {
    this.cutShort ??= message;
  }

  /** csv-parse hands each record's cells here (and null at the end). */
  override push(cells: string[] | null): boolean {
    if (cells === null) return this.held ? true : super.push(null);
    if (this.held) {
      this.held.push(cells);
      return true;
    }
    return this.record(cells);
  }

  private record(cells: string[]): boolean {
    if (this.failed) return false;
    const line = this.line;
    this.line += 1 + lineEndsIn(cells);
    if (cells.length > MAX_CELLS) return this.problem(line, TOO_MANY_CELLS);
    // A blank line is no record.
    if (cells.length === 1 && cells[0] === '') return true;
    return super.push({ line, cells } satisfies CsvRecord);
  }

  /** The record in progress, if any, starts on this.line: every record before it has gone through record(). */
  private problem(line: number, message: string): false {
    this.failed = true;
    super.push({ line, cells: [], problem: message } satisfies CsvRecord);
    return false;
  }

  /** A CSV error becomes the problem record; anything else (a bug) stays an error. */
  private fail(err: Error | null | undefined, done: TransformCallback): void {
    if (!err) return done();
    if (!(err instanceof ParseError)) return done(err);
    this.problem(this.line, PROBLEMS[err.code] ?? 'the file cannot be read as CSV from this line');
    done();
  }

  override _transform(chunk: Buffer, encoding: BufferEncoding, done: TransformCallback): void {
    // After an error csv-parse never calls back again: it is not asked.
    if (this.failed) return done();
    if (chunk.length > 0) this.lastByte = chunk[chunk.length - 1];
    super._transform(chunk, encoding, (err) => this.fail(err, done));
  }

  override _flush(done: TransformCallback): void {
    if (this.failed) return done();
    if (!this.cutShort) return super._flush((err) => this.fail(err, done));
    // Cut short: csv-parse reads its last bytes (it holds a few back to see a CRLF whole) and would hand over the
    // record in progress as if it were whole. Every record but that one is read; then the reason the file ends.
    const cutShort = this.cutShort;
    this.held = [];
    super._flush((err) => {
      const held = this.held ?? [];
      this.held = undefined;
      if (err && !(err instanceof ParseError)) return done(err);
      // Without an error (an open quote, a runaway row) the last record is the one in progress, unless the input
      // ended with a line end.
      if (!err && this.lastByte !== CR && this.lastByte !== LF) held.pop();
      for (const cells of held) this.record(cells);
      if (!this.failed) this.problem(this.line, cutShort);
      done();
    });
  }
}
