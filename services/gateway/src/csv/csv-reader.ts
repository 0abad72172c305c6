import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';

/**
 * One CSV record: its cells and the file's line where it starts (line 1 is the first line). A record with a
 * `problem` is the last one: the file could not be read on from that line (its cells are empty).
 */
export interface CsvRecord {
  line: number;
  cells: string[];
  problem?: string;
}

/** A file this reader cannot go on with (an unclosed quote, a runaway row): the line where the record starts. */
export class CsvError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

/** A record longer than this is refused: it is almost always a quote left open that swallows the rest of the file. */
export const MAX_RECORD_CHARS = 256 * 1024;
const MAX_CELLS = 500;

enum State {
  CellStart,
  Unquoted,
  Quoted,
  /** A quote inside a quoted cell: the cell's end, or the first half of an escaped quote (""). */
  QuoteInQuoted,
}

/**
 * A streaming RFC 4180 reader: bytes (UTF-8, with or without a BOM) in, records out (object mode), one chunk
 * at a time, so memory stays flat whatever the file's size. Handles quoted cells with commas, escaped quotes ("")
 * and line breaks inside them, CRLF, LF and lone CR line ends. Being lenient where files in the wild are sloppy:
 * a quote inside an unquoted cell, or text after a closing quote, is kept as text.
 */
export class CsvReader extends Transform {
  private readonly decoder = new StringDecoder('utf8');
  private state = State.CellStart;
  private cell = '';
  private cells: string[] = [];
  private recordChars = 0;
  /** The physical line being read, and the one the current record started on. */
  private line = 1;
  private recordLine = 1;
  private first = true;
  /** The previous character was a CR (a following LF belongs to the same line end). */
  private afterCr = false;
  /** Set once a problem record went out: the rest of the input is ignored. */
  private failed = false;
  /** Why the input ends early (cut at a size limit): the record in progress is then dropped, not read. */
  private cutShort?: string;

  constructor() {
    super({ readableObjectMode: true, writableObjectMode: false, readableHighWaterMark: 1000 });
  }

  /**
   * The input will end before the file does (e.g. at an upload size limit): the record in progress at the end is
   * not read, and a problem record with `message` ends the output instead.
   */
  cut(message: string): void {
    this.cutShort ??= message;
  }

  /**
   * Problems become a last record rather than a stream error: an error would discard the records still buffered
   * for the consumer, and those (the rows before the problem) are good.
   */
  private fail(err: unknown): void {
    if (!(err instanceof CsvError)) throw err;
    this.failed = true;
    this.push({ line: err.line, cells: [], problem: err.message } satisfies CsvRecord);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (this.failed) return done();
    try {
      this.read$(this.decoder.write(chunk));
      done();
    } catch (err) {
      try {
        this.fail(err);
        done();
      } catch (other) {
        done(other as Error);
      }
    }
  }

  override _flush(done: TransformCallback): void {
    if (this.failed) return done();
    try {
      if (this.cutShort) throw new CsvError(this.recordLine, this.cutShort);
      this.read$(this.decoder.end());
      if (this.state === State.Quoted) throw new CsvError(this.recordLine, 'a quoted cell is not closed before the end of the file');
      if (this.state !== State.CellStart || this.cells.length > 0) this.endRecord();
      done();
    } catch (err) {
      try {
        this.fail(err);
        done();
      } catch (other) {
        done(other as Error);
      }
    }
  }

  private read$(text: string): void {
    let i = 0;
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) i = 1;
    }
    for (; i < text.length; i++) {
      const c = text[i];
      if (this.afterCr) {
        this.afterCr = false;
        // CRLF: the CR already ended the line (or went into a quoted cell with its LF below).
        if (c === '\n' && this.state !== State.Quoted) continue;
      }
      if (++this.recordChars > MAX_RECORD_CHARS) throw new CsvError(this.recordLine, `a row is longer than ${MAX_RECORD_CHARS} characters (is a quote left open?)`);
      switch (this.state) {
        case State.CellStart:
          if (c === '"') this.state = State.Quoted;
          else if (c === ',') this.endCell();
          else if (c === '\n' || c === '\r') this.endLine(c);
          else {
            this.cell += c;
            this.state = State.Unquoted;
          }
          break;
        case State.Unquoted:
          if (c === ',') this.endCell();
          else if (c === '\n' || c === '\r') this.endLine(c);
          else this.cell += c;
          break;
        case State.Quoted:
          if (c === '"') this.state = State.QuoteInQuoted;
          else {
            this.cell += c;
            // Line breaks inside a quoted cell are part of it, but still lines of the file.
            if (c === '\n' && !this.crBefore()) this.line++;
            else if (c === '\r') {
              this.line++;
              this.afterCr = true;
            }
          }
          break;
        case State.QuoteInQuoted:
          if (c === '"') {
            this.cell += '"';
            this.state = State.Quoted;
          } else if (c === ',') this.endCell();
          else if (c === '\n' || c === '\r') this.endLine(c);
          else {
            this.cell += c;
            this.state = State.Unquoted;
          }
          break;
      }
    }
  }

  /** Inside a quoted cell, an LF right after a CR is the same line break (counted at the CR). */
  private crBefore(): boolean {
    return this.cell.length >= 2 && this.cell[this.cell.length - 2] === '\r';
  }

  private endCell(): void {
    if (this.cells.length >= MAX_CELLS) throw new CsvError(this.recordLine, `a row has more than ${MAX_CELLS} cells`);
    this.cells.push(this.cell);
    this.cell = '';
    this.state = State.CellStart;
  }

  private endLine(c: string): void {
    this.endRecord();
    this.line++;
    this.recordLine = this.line;
    if (c === '\r') this.afterCr = true;
  }

  private endRecord(): void {
    this.endCell();
    const cells = this.cells;
    this.cells = [];
    this.recordChars = 0;
    // A blank line is no record.
    if (cells.length === 1 && cells[0] === '') return;
    this.push({ line: this.recordLine, cells } satisfies CsvRecord);
  }
}
