import { Readable } from 'node:stream';
import { CsvReader, MAX_RECORD_CHARS, type CsvRecord } from './csv-reader';
import { stringify } from 'csv-stringify/sync';
import { csvLine, neutralise, unneutralise } from './csv-writer';

/** The records of `text` fed in chunks of `size` bytes (so every boundary case is crossed). */
async function read(text: string | Buffer, size = 3): Promise<CsvRecord[]> {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  const out: CsvRecord[] = [];
  for await (const r of Readable.from(chunks).pipe(new CsvReader())) out.push(r as CsvRecord);
  return out;
}

describe('CsvReader', () => {
  it.each([1, 2, 7, 1000])('reads quotes, escaped quotes, commas and line breaks inside cells, CRLF, LF and CR, chunk size %i', async (size) => {
    const text = 'name,note\r\n"Nguyễn, An","say ""hi""\r\nsecond line"\nBinh,plain\rChi,"x\ny"\r\n';
    expect(await read(text, size)).toEqual([
      { line: 1, cells: ['name', 'note'] },
      { line: 2, cells: ['Nguyễn, An', 'say "hi"\r\nsecond line'] },
      { line: 4, cells: ['Binh', 'plain'] },
      { line: 5, cells: ['Chi', 'x\ny'] },
    ]);
  });

  it('skips a UTF-8 BOM and blank lines; the last line needs no line end; empty cells stay', async () => {
    expect(await read('\uFEFFa,b\n\n,\nx,', 1)).toEqual([
      { line: 1, cells: ['a', 'b'] },
      { line: 3, cells: ['', ''] },
      { line: 4, cells: ['x', ''] },
    ]);
  });

  it('keeps stray quotes in unquoted cells, and a quoted cell with text after its closing quote as it was written', async () => {
    // (The hand-written reader before csv-parse dropped those two quotes: "c"d gave cd.)
    expect(await read('a"b,"c"d,"e" \n')).toEqual([{ line: 1, cells: ['a"b', '"c"d', '"e" '] }]);
  });

  it('reads a UTF-16LE file by its BOM (csv-parse does; the hand-written reader garbled it)', async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('name\r\nNguyễn An\r\n', 'utf16le')]);
    expect(await read(utf16)).toEqual([
      { line: 1, cells: ['name'] },
      { line: 2, cells: ['Nguyễn An'] },
    ]);
  });

  it('ends with a problem record for a quoted cell left open, naming the line it started on; the rows before it stay', async () => {
    expect(await read('a\nb\n"open\nmore\n')).toEqual([
      { line: 1, cells: ['a'] },
      { line: 2, cells: ['b'] },
      { line: 3, cells: [], problem: 'a quoted cell is not closed before the end of the file' },
    ]);
  });

  it('ends with a problem record for a runaway row instead of holding the rest of the file', async () => {
    const records = await read(`a\n"${'x'.repeat(MAX_RECORD_CHARS + 10)}\nb\n`, 64 * 1024);
    expect(records).toEqual([
      { line: 1, cells: ['a'] },
      { line: 2, cells: [], problem: expect.stringContaining('longer than') },
    ]);
  });

  it('ends with a problem record for a row of more than 500 cells, however short (a line of commas)', async () => {
    const row = (cells: number) => ','.repeat(cells - 1);
    expect(await read(`a\n${row(500)}\n${row(100_000)}\nb\n`, 64 * 1024)).toEqual([
      { line: 1, cells: ['a'] },
      { line: 2, cells: Array(500).fill('') },
      { line: 3, cells: [], problem: 'a row has more than 500 cells' },
    ]);
  });

  it('a line of commas longer than a row may be is a runaway row: the cells past 500 are not kept one by one', async () => {
    const records = await read(`a\n${','.repeat(MAX_RECORD_CHARS + 1000)}\nb\n`, 64 * 1024);
    expect(records).toEqual([
      { line: 1, cells: ['a'] },
      { line: 2, cells: [], problem: expect.stringContaining('longer than') },
    ]);
  });

  /** The records of `text` read as an input cut short (as at the upload size limit). */
  async function readCut(text: string): Promise<CsvRecord[]> {
    const reader = new CsvReader();
    reader.cut('too big');
    const out: CsvRecord[] = [];
    const done = (async () => {
      for await (const r of reader) out.push(r as CsvRecord);
    })();
    reader.end(Buffer.from(text));
    await done;
    return out;
  }

  it('cut(): input that ends early drops the row in progress and ends with the reason', async () => {
    expect(await readCut('a\nhalf a r')).toEqual([
      { line: 1, cells: ['a'] },
      { line: 2, cells: [], problem: 'too big' },
    ]);
  });

  it('cut(): a whole row just before the cut is read, and so is the last row of input that ends with a line end', async () => {
    // csv-parse holds the last bytes of its input back until the end (to see a CRLF whole): b's line end among them.
    expect(await readCut('a\r\nb\r\nc')).toEqual([
      { line: 1, cells: ['a'] },
      { line: 2, cells: ['b'] },
      { line: 3, cells: [], problem: 'too big' },
    ]);
    expect(await readCut('a\nb\n')).toEqual([
      { line: 1, cells: ['a'] },
      { line: 2, cells: ['b'] },
      { line: 3, cells: [], problem: 'too big' },
    ]);
  });

  it('cut(): the reason, not the open quote, ends a file cut inside a quoted cell', async () => {
    expect(await readCut('a\n"two\nlines, cut')).toEqual([
      { line: 1, cells: ['a'] },
      { line: 2, cells: [], problem: 'too big' },
    ]);
  });
});

describe('csvLine', () => {
  it('quotes what needs quotes and neutralises formula starts; the reader and unneutralise give the values back', async () => {
    const values = ['=SUM(A1)', '+84901234567', '-5', '@cmd', '\tTab', '\rCR', 'a,b', 'say "x"', 'two\nlines', ' padded ', 'plain'];
    const line = csvLine(values);
    expect(line).toBe(`'=SUM(A1),'+84901234567,'-5,'@cmd,'\tTab,"'\rCR","a,b","say ""x""","two\nlines"," padded ",plain\r\n`);
    const [record] = await read(line);
    expect(record.cells.map(unneutralise)).toEqual(values);
  });

  it('writes the bytes csv-stringify writes when set up the same way (the library it stands in for)', () => {
    // Cells made of pieces that each change the quoting or the neutralising; a fixed seed, so a failure repeats.
    const pieces = ['', 'a', 'Nguyễn', '=x', '+1', '-', '@', '\t', '\r', '\n', '\r\n', ',', '"', ' ', "'", '＝'];
    let seed = 7;
    const next = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 16) % n;
    const cell = () => Array.from({ length: 1 + next(3) }, () => pieces[next(pieces.length)]).join('');
    const records = Array.from({ length: 2000 }, () => Array.from({ length: 1 + next(5) }, cell));
    const reference = stringify(records, {
      record_delimiter: '\r\n',
      quote_record_delimiter: true,
      quoted_match: /^\s|\s$/,
      cast: { string: neutralise },
    });
    expect(records.map(csvLine).join('')).toBe(reference);
  });

  it('leaves an apostrophe that does not guard a formula character alone', () => {
    expect(unneutralise("'quoted'")).toBe("'quoted'");
    expect(unneutralise("'")).toBe("'");
  });
});
