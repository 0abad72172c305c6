/**
 * Cutting an article into chunks: the unit that is searched, ranked and quoted in a draft. A chunk is a few
 * paragraphs (about CHUNK_TARGET characters), never splits a paragraph unless the paragraph alone is too long
 * (then at sentence ends, then at spaces), and starts again at every Markdown heading so a section's text stays
 * together. A chunk that continues a section repeats the section's heading: it is read, and found, on its own.
 */

export const CHUNK_TARGET = 900;
export const CHUNK_MAX = 1500;

const HEADING = /^#{1,6}\s+\S/;

/** Paragraphs (blank-line separated blocks) with the heading of the section each belongs to. */
function blocks(content: string): { text: string; heading: string; isHeading: boolean }[] {
  const out: { text: string; heading: string; isHeading: boolean }[] = [];
  let heading = '';
  let lines: string[] = [];
  const flush = () => {
    const text = lines.join('\n').trim();
    if (text) out.push({ text, heading, isHeading: false });
    lines = [];
  };
  for (const line of content.replace(/\r\n?/g, '\n').split('\n')) {
    if (HEADING.test(line.trim())) {
      flush();
      heading = line.trim();
      out.push({ text: heading, heading, isHeading: true });
    } else if (!line.trim()) flush();
    else lines.push(line);
  }
  flush();
  return out;
}

/** A paragraph longer than CHUNK_MAX, in pieces: at sentence ends where it can, else at the last space. */
function splitLong(text: string): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > CHUNK_MAX) {
    const window = rest.slice(0, CHUNK_MAX);
    const sentenceEnd = Math.max(...['. ', '! ', '? ', '.\n', '\n'].map((m) => window.lastIndexOf(m)));
    const space = window.lastIndexOf(' ');
    const cut = sentenceEnd > CHUNK_MAX / 3 ? sentenceEnd + 1 : space > CHUNK_MAX / 3 ? space : CHUNK_MAX;
    pieces.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) pieces.push(rest);
  return pieces;
}

/** The article's chunks, in order; a non-empty article has at least one. */
export function chunkArticle(content: string): string[] {
  const chunks: string[] = [];
  let current = '';
  let currentHeading = '';
  const push = () => {
    if (current.trim()) chunks.push(current.trim());
    current = '';
  };
  for (const b of blocks(content)) {
    if (b.isHeading) {
      push();
      current = b.text;
      currentHeading = b.text;
      continue;
    }
    for (const piece of b.text.length > CHUNK_MAX ? splitLong(b.text) : [b.text]) {
      if (current && current.length + 2 + piece.length > CHUNK_TARGET) {
        push();
        // A section that runs on: its heading goes first again, so the chunk says what it is about.
        if (b.heading && b.heading === currentHeading) current = b.heading;
      }
      current = current ? `${current}\n\n${piece}` : piece;
    }
  }
  push();
  return chunks;
}
