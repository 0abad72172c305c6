import { Worker } from 'node:worker_threads';
import { AppError, invalid } from '@crm/grpc-kit';

/** How long one PDF may take to read; a file that takes longer is refused, not waited on. */
export const PDF_TIMEOUT_MS = 15_000;

// The parser runs in a worker thread: a PDF is untrusted input whose parsing can take much CPU and memory, so it
// never blocks the service's event loop and is ended at the deadline. The worker is plain CommonJS evaluated from
// this string and requires pdf-parse (pdf.js, offline: no font or map is fetched for text) by its resolved path.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { PDFParse } = require(workerData.parser);
(async () => {
  const parser = new PDFParse({ data: new Uint8Array(workerData.bytes), verbosity: 0 });
  try {
    const result = await parser.getText({ pageJoiner: '' });
    parentPort.postMessage({ text: result.text, pages: result.total });
  } finally {
    await parser.destroy();
  }
})().catch((err) => parentPort.postMessage({ error: String((err && err.name) || 'Error') + ': ' + String((err && err.message) || err) }));
`;

/** The text layer of a PDF, pages joined by blank lines; a PDF that cannot be read (or has no text) is a 400 naming `file`. */
export function pdfText(bytes: Buffer, timeoutMs = PDF_TIMEOUT_MS): Promise<string> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { parser: require.resolve('pdf-parse'), bytes },
      resourceLimits: { maxOldGenerationSizeMb: 256 },
      stdout: true,
      stderr: true,
    });
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
      void worker.terminate();
    };
    const timer = setTimeout(() => settle(() => reject(invalid('file', `the PDF could not be read within ${timeoutMs / 1000} s`))), timeoutMs);
    worker.on('message', (m: { text?: string; error?: string }) =>
      settle(() => (typeof m.text === 'string' ? resolve(m.text) : reject(invalid('file', 'is not a PDF that can be read')))),
    );
    worker.on('error', () => settle(() => reject(invalid('file', 'is not a PDF that can be read'))));
    worker.on('exit', () => settle(() => reject(new AppError('internal', 'The PDF reader stopped before it answered'))));
  });
}
