import { Readable } from 'node:stream';
import { CsvReader, MAX_RECORD_CHARS, type CsvRecord } from './csv-reader';
import { csvLine, unneutralise } from './csv-writer';

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

  it('keeps stray quotes in unquoted cells and text after a closing quote', async () => {
    expect(await read('a"b,"c"d\n')).toEqual([{ line: 1, cells: ['a"b', 'cd'] }]);
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
    expect(records).toEqual([{ line: 1, cells: ['a'] }, { line: 2, cells: [], problem: expect.stringContaining('longer than') }]);
  });

  it('cut(): input that ends early drops the row in progress and ends with the reason', async () => {
    const reader = new CsvReader();
    reader.cut('too big');
    const out: CsvRecord[] = [];
    const done = (async () => {
      for await (const r of reader) out.push(r as CsvRecord);
    })();
    reader.end(Buffer.from('a\nhalf a r'));
    await done;
    expect(out).toEqual([{ line: 1, cells: ['a'] }, { line: 2, cells: [], problem: 'too big' }]);
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

  it('leaves an apostrophe that does not guard a formula character alone', () => {
    expect(unneutralise("'quoted'")).toBe("'quoted'");
    expect(unneutralise("'")).toBe("'");
  });
});
