import { AppError, invalid } from '@crm/grpc-kit';
import { rejectNul } from '../text';

// The knowledge base's contract rules (ai's articles, issue #32): the gateway's schemas and ai's handlers apply the
// same limits, so a caller gets the same field and words whichever way it comes in.

export const TITLE_MAX = 200;
/** Characters of an article's text (typed, or extracted from a file): a long manual, not a book. */
export const CONTENT_MAX = 200_000;
/** Bytes of an uploaded file (a PDF carries far more bytes than text). */
export const FILE_MAX_BYTES = 2 * 1024 * 1024;
export const SEARCH_MAX = 200;
export const FILE_NAME_MAX = 255;

/** What an upload may be: plain text, Markdown, or a PDF with a text layer, told by its name or its declared type. */
export type FileKind = 'text' | 'markdown' | 'pdf';
const BY_EXTENSION: Record<string, FileKind> = { txt: 'text', text: 'text', md: 'markdown', markdown: 'markdown', pdf: 'pdf' };
const BY_TYPE: Record<string, FileKind> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'application/pdf': 'pdf',
};
export const FILE_TYPES_MESSAGE = 'must be a text (.txt), Markdown (.md) or PDF (.pdf) file';

/** The kind of an uploaded file: its extension first (browsers send octet-stream for .md), else its declared type. */
export function fileKind(fileName: string, contentType: string): FileKind | undefined {
  const ext = /\.([a-z0-9]+)$/i.exec(fileName.trim())?.[1]?.toLowerCase();
  if (ext && BY_EXTENSION[ext]) return BY_EXTENSION[ext];
  return BY_TYPE[contentType.split(';')[0].trim().toLowerCase()];
}

export const tooLarge = (field: string, message: string) =>
  new AppError('payload_too_large', `${field}: ${message}`, { details: [{ field, message }] });

/** An article's title: trimmed, required, at most TITLE_MAX characters. */
export function title(value: string | undefined): string {
  rejectNul(value, 'title');
  const v = (value ?? '').trim();
  if (!v) throw invalid('title', 'is required');
  if (v.length > TITLE_MAX) throw invalid('title', `must be at most ${TITLE_MAX} characters`);
  return v;
}

/** An article's text: required; longer than CONTENT_MAX is a 413 naming the field (a file's extracted text too). */
export function content(value: string | undefined, field = 'content'): string {
  rejectNul(value, field);
  const v = (value ?? '').replace(/\r\n?/g, '\n').trim();
  if (!v) throw invalid(field, field === 'file' ? 'has no text to read' : 'is required');
  if (v.length > CONTENT_MAX) throw tooLarge(field, `must be at most ${CONTENT_MAX.toLocaleString('en-US')} characters of text`);
  return v;
}
