import { chunkArticle, CHUNK_MAX, CHUNK_TARGET } from './chunking';
import { fileText } from './file-text';
import { pdfText } from './pdf-text';
import { answers, excerptOf, matchOf, plainText } from './passages';
import { rankPassages } from './retrieval';
import { allOf, anyOf, queryTerms } from './terms';
import type { ChunkHit } from './articles.repo';

const WARRANTY_VI = [
  '# Chính sách bảo hành',
  '',
  'Máy xay sinh tố Lumi được bảo hành chính hãng 24 tháng kể từ ngày mua. Khách mang máy và hoá đơn đến cửa hàng gần nhất.',
  '',
  '## Đổi trả',
  '',
  'Sản phẩm lỗi do nhà sản xuất được đổi mới trong 7 ngày đầu. Hàng đã qua sử dụng không được hoàn tiền.',
].join('\n');

const hit = (article_id: string, title: string, content: string, rank = 0.1, position = 0): ChunkHit => ({
  article_id,
  title,
  content,
  rank,
  position,
});

describe('chunking', () => {
  it('keeps a short article whole, and starts a new chunk at each heading', () => {
    expect(chunkArticle('Opening hours: 9 to 17, Monday to Saturday.')).toEqual(['Opening hours: 9 to 17, Monday to Saturday.']);
    const chunks = chunkArticle(WARRANTY_VI);
    expect(chunks).toHaveLength(2);
    expect(chunks[0]).toMatch(/^# Chính sách bảo hành\n\nMáy xay/);
    expect(chunks[1]).toMatch(/^## Đổi trả\n\nSản phẩm lỗi/);
  });

  it('gathers paragraphs up to the target size and repeats the section heading in the chunk that continues it', () => {
    const paragraph = (i: number) => `Paragraph ${i}: ${'the delivery team calls before arriving. '.repeat(8).trim()}`;
    const text = ['## Delivery', '', ...Array.from({ length: 6 }, (_, i) => [paragraph(i), '']).flat()].join('\n');
    const chunks = chunkArticle(text);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) {
      expect(c.startsWith('## Delivery')).toBe(true);
      expect(c.length).toBeLessThanOrEqual(CHUNK_TARGET + CHUNK_MAX);
    }
    // Every paragraph is in exactly one chunk, in order.
    const joined = chunks.join('\n');
    for (let i = 0; i < 6; i++) expect(joined.split(`Paragraph ${i}:`)).toHaveLength(2);
  });

  it('cuts a paragraph longer than the maximum at sentence ends, never losing text', () => {
    const sentence = 'Đơn hàng trên 500.000đ được miễn phí giao hàng nội thành. ';
    const long = sentence.repeat(60).trim();
    const chunks = chunkArticle(long);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(CHUNK_MAX);
      expect(c.endsWith('.')).toBe(true);
    }
    expect(chunks.join(' ').replace(/\s+/g, ' ')).toBe(long);
  });

  it('cuts a run of text without sentence ends at spaces', () => {
    const chunks = chunkArticle('word '.repeat(1000).trim());
    expect(chunks.every((c) => c.length <= CHUNK_MAX && !c.startsWith(' ') && !c.endsWith(' '))).toBe(true);
    expect(chunks.join(' ').split(' ')).toHaveLength(1000);
  });
});

describe('terms', () => {
  it('folds accents, drops stop and question words, and keeps word pairs', () => {
    const t = queryTerms('Cho em hỏi máy xay bảo hành bao lâu vậy shop?');
    expect(t.words).toEqual(['may', 'xay', 'bao', 'hanh', 'lau']);
    expect(t.pairs).toEqual(['may xay', 'xay bao', 'bao hanh', 'hanh bao', 'bao lau']);
    // The same message typed without accents asks the same.
    expect(queryTerms('cho em hoi may xay bao hanh bao lau vay shop?')).toEqual(t);
  });

  it('drops an English plural "s" so blenders finds blender', () => {
    expect(queryTerms('Do your blenders have a warranty?').words).toEqual(['blender', 'warranty']);
  });

  it('builds tsqueries from letters and digits only (nothing of the input reaches the query syntax)', () => {
    expect(anyOf(['bao', 'hanh'])).toBe("'bao':* | 'hanh':*");
    expect(anyOf(["x'); DROP", '&|!'])).toBeUndefined();
    expect(allOf('Bảo hành')).toBe("'bao' & 'hanh':*");
    expect(allOf('blenders warranty')).toBe("'blender':* & 'warranty':*");
    expect(allOf("'&|!:*")).toBeUndefined();
  });
});

describe('passages', () => {
  it('reads Markdown as plain text', () => {
    expect(plainText('## Giờ mở cửa\n- **Thứ 2–7**: 8h–21h\n- Xem [bản đồ](https://example.test/map)')).toBe(
      'Giờ mở cửa\nThứ 2–7: 8h–21h\nXem bản đồ (https://example.test/map)',
    );
  });

  it('quotes the sentence that answers, not the heading', () => {
    const terms = queryTerms('Máy xay bảo hành bao lâu?');
    expect(excerptOf(chunkArticle(WARRANTY_VI)[0], terms)).toBe(
      'Máy xay sinh tố Lumi được bảo hành chính hãng 24 tháng kể từ ngày mua. Khách mang máy và hoá đơn đến cửa hàng gần nhất.',
    );
  });

  it('answers only with two words and a pair, or half the question', () => {
    const terms = queryTerms('may xay bao hanh bao lau');
    expect(answers(matchOf(terms, WARRANTY_VI))).toBe(true);
    // One shared word is chance.
    expect(answers(matchOf(queryTerms('Phí ship đi Huế bao nhiêu?'), WARRANTY_VI))).toBe(false);
    expect(answers(matchOf(queryTerms('What is the warranty on the blender?'), 'Every blender comes with a 2-year warranty.'))).toBe(true);
  });
});

describe('rankPassages', () => {
  const terms = queryTerms('Máy xay sinh tố bảo hành bao lâu vậy shop?');

  it('picks the chunk that answers, one per article, best first, with its excerpt', () => {
    const chunks = chunkArticle(WARRANTY_VI);
    const out = rankPassages(
      terms,
      [
        hit('returns', 'Chính sách bảo hành', chunks[1], 0.5, 1),
        hit('warranty', 'Chính sách bảo hành', chunks[0], 0.2, 0),
        hit('warranty', 'Chính sách bảo hành', chunks[1], 0.1, 1),
        hit('hours', 'Giờ mở cửa', 'Cửa hàng mở cửa từ 8h đến 21h mỗi ngày.', 0.9),
      ],
      3,
    );
    expect(out.map((p) => p.articleId)).toEqual(['warranty', 'returns']);
    expect(out[0].excerpt).toMatch(/^Máy xay sinh tố Lumi được bảo hành chính hãng 24 tháng/);
    expect(out[0].coverage).toBeGreaterThan(out[1].coverage);
  });

  it('finds nothing when no chunk answers', () => {
    expect(rankPassages(queryTerms('Shop có bán nồi chiên không?'), [hit('w', 'Chính sách bảo hành', WARRANTY_VI)], 3)).toEqual([]);
  });
});

describe('fileText', () => {
  const utf8 = (s: string) => Buffer.from(s, 'utf8');

  it('reads text and Markdown as UTF-8 (BOM dropped), by extension first, then by declared type', async () => {
    expect(await fileText(utf8('\uFEFFGiờ mở cửa: 8h–21h'), 'hours.txt', 'application/octet-stream')).toEqual({
      text: 'Giờ mở cửa: 8h–21h',
      kind: 'text',
    });
    expect((await fileText(utf8('# Ship'), 'faq.md', '')).kind).toBe('markdown');
    expect((await fileText(utf8('# Ship'), 'faq', 'text/markdown; charset=utf-8')).kind).toBe('markdown');
  });

  it.each([
    [
      'a Word file',
      utf8('PK\u0003\u0004...'),
      'policy.docx',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      /must be a text/,
    ],
    ['text that is not UTF-8', Buffer.from([0x47, 0x69, 0xe1, 0x20, 0xff]), 'notes.txt', 'text/plain', /must be UTF-8 text/],
    ['a binary file named .txt', Buffer.from([0x41, 0x00, 0x42]), 'x.txt', 'text/plain', /must be text/],
    ['a .pdf that is not a PDF', utf8('hello'), 'x.pdf', 'application/pdf', /is not a PDF/],
  ])('refuses %s with a 400 naming file', async (_what, bytes, name, type, message) => {
    await expect(fileText(bytes, name, type)).rejects.toMatchObject({
      kind: 'invalid_argument',
      details: [{ field: 'file', message: expect.stringMatching(message) }],
    });
  });

  it('refuses a file past the size limit with a 413 naming file', async () => {
    await expect(fileText(Buffer.alloc(2 * 1024 * 1024 + 1, 0x61), 'big.txt', 'text/plain')).rejects.toMatchObject({
      kind: 'payload_too_large',
      details: [{ field: 'file' }],
    });
  });
});

describe('pdfText (a worker thread; a real PDF is read in tests/ai/knowledge.test.ts)', () => {
  it('a file that only starts like a PDF is a 400 naming file', async () => {
    await expect(pdfText(Buffer.from('%PDF-1.4\nthis is not a PDF at all'))).rejects.toMatchObject({
      kind: 'invalid_argument',
      details: [{ field: 'file', message: 'is not a PDF that can be read' }],
    });
  });

  it('a PDF still being read at the deadline is refused, and its worker ended', async () => {
    await expect(pdfText(Buffer.from('%PDF-1.4\n'), 1)).rejects.toMatchObject({
      kind: 'invalid_argument',
      details: [{ field: 'file', message: expect.stringMatching(/could not be read within/) }],
    });
  });
});
