import { area } from '../registry';
import { Attachment } from '../../routes/chat.schemas';
import { attachmentRoutes, folderRoutes, inboxRoutes, inboxSettingsRoutes, messageRoutes, presetRoutes } from '../../routes/chat.routes';
import { conversationNoteRoutes } from '../../routes/conversation-notes.routes';
import { macroRoutes } from '../../routes/macros.routes';
import { scheduledMessageRoutes } from '../../routes/scheduled-messages.routes';

/** Attachment bytes stream through the gateway to messaging's HTTP endpoint (chat.routes `stream`). */
const streamed = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Attachments' });
streamed.op('POST /chat/attachments', {
  summary: 'Upload a file to send with a message (multipart/form-data, field `file`); pass its id in a send’s attachments',
  description:
    '413 past the size limit (ATTACHMENT_MAX_BYTES) or when the organization’s storage for uploads (ATTACHMENTS_QUOTA_MB) is full — files received from the chat network ' +
    'have a quota of their own (ATTACHMENTS_INBOUND_QUOTA_MB); 400 when the bytes do not match the declared type.',
  body: 'file',
  responses: { 201: Attachment },
  errors: [413, 503],
});
streamed.op('GET /chat/attachments/:id', {
  summary: 'The file’s bytes, with its own Content-Type (images inline, anything else as a download)',
  description:
    '410 `attachment_expired` once ATTACHMENTS_RETENTION_DAYS (default 365) deleted the bytes; the message still lists the file, with `expiredAt`.',
  responses: { 200: 'binary' },
  errors: [410, 503],
});

/** Conversations, messages, notes, folders, presets, inbox settings and attachments (messaging), in the document's order of paths and tags. */
export const chatOps = [
  ...inboxRoutes.ops,
  ...messageRoutes.ops,
  // Declared with their routes (routes/*.routes.ts).
  ...scheduledMessageRoutes.ops,
  ...macroRoutes.ops,
  ...conversationNoteRoutes.ops,
  ...inboxSettingsRoutes.ops,
  ...folderRoutes.ops,
  ...presetRoutes.ops,
  ...streamed.ops,
  ...attachmentRoutes.ops,
];
