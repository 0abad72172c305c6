/**
 * Files: uploads (streamed through the HTTP server, their content type checked against what they claim), the rows
 * that link them to messages and scheduled sends, downloads by who may see the conversation, and the sweeper that
 * removes orphans and expires old files. The rest of messaging uses this face.
 */
export * as attachments from './attachments';
export type { ReceivedUpload } from './attachments';
export * as files from './attachments.repo';
export { type AttachmentRow, forMessages, toAttachment } from './attachments.repo';
export { SNIFF_BYTES, TextCheck } from './content-type';
export { startAttachmentSweeper, sweepOrphanAttachments } from './attachment-sweeper';
