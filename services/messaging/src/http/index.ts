/** The attachments HTTP server: uploads and downloads stream through it. */
export { startHttpServer } from './server';
