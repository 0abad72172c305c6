import { invalid } from '@crm/grpc-kit';
import { knowledgeRules } from '@crm/validation';
import { pdfText } from './pdf-text';

/** The text of an uploaded file, by its kind (its name's extension, else its declared type). */
export async function fileText(bytes: Buffer, fileName: string, contentType: string): Promise<{ text: string; kind: knowledgeRules.FileKind }> {
  if (bytes.length > knowledgeRules.FILE_MAX_BYTES)
    throw knowledgeRules.tooLarge('file', `must be at most ${knowledgeRules.FILE_MAX_BYTES / (1024 * 1024)} MB`);
  const kind = knowledgeRules.fileKind(fileName, contentType);
  if (!kind) throw invalid('file', knowledgeRules.FILE_TYPES_MESSAGE);
  if (kind === 'pdf') {
    if (bytes.subarray(0, 5).toString('latin1') !== '%PDF-') throw invalid('file', 'is not a PDF that can be read');
    // NUL and other control characters come with some PDFs' text layers; only line breaks and tabs are text.
    return { text: clean(await pdfText(bytes)), kind };
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw invalid('file', 'must be UTF-8 text');
  }
  if (text.includes('\u0000')) throw invalid('file', 'must be text, not a binary file');
  return { text: clean(text), kind };
}

// eslint-disable-next-line no-control-regex
const clean = (text: string) => text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '').normalize('NFC');
