import { z } from 'zod';
import {
  Assign,
  BulkConversations,
  Flags,
  FolderConversations,
  FolderPatch,
  InboxSettings,
  ListQuery,
  NewFolder,
  NewPreset,
  PresetPatch,
  PresetQuery,
  SearchQuery,
  ReactionBody,
  Send,
  SetPriority,
  SetStatus,
  StartConversation,
} from '../../routes/chat.routes';
import { macroRoutes } from '../../routes/macros.routes';
import { conversationNoteRoutes } from '../../routes/conversation-notes.routes';
import { scheduledMessageRoutes } from '../../routes/scheduled-messages.routes';
import { ScheduledMessage } from '../../routes/scheduled-messages.schemas';
import { reply } from '../proto-schema';
import { area } from '../registry';
import { VIEW_APPLIED, VIEW_ID } from '../../routes/views.schemas';
import { page, Pagination } from '../schemas/common';
import {
  Attachment,
  Conversation,
  ConversationCounts,
  ConversationDetail,
  ConversationMove,
  Folder,
  InboxSettings as InboxSettingsOut,
  Message,
  Preset,
  SearchHit,
  SentMessage,
} from '../schemas/messaging';

/** Conversations, messages, notes, folders, presets, inbox settings and attachments (messaging), internal API. */
const VISIBILITY =
  'With inbox visibility `assigned`, an agent sees only the conversations assigned to them and the unassigned ones of their accounts; others answer 404.';

const inbox = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Conversations' });
inbox.op('GET /conversations/counts', {
  summary:
    'Conversation counts for the inbox tabs (total, unread, unreplied, archived, mine, unassigned) and for each of the caller’s saved conversation views',
  responses: { 200: ConversationCounts },
});
inbox.op('GET /conversations', {
  summary:
    'Conversations, filtered (status, account, folder, assignee, priority, SLA status, unread…) and sorted by last message, creation, priority or SLA due time',
  description: `sortBy=priority: urgent first, then high, medium, low, and the conversations without a priority last (direction asc: low first, still none last); newest message first within a priority. sortBy=slaDue: the nearest pending SLA due time first (an overdue one included; direction desc: the furthest first), conversations without one last. sla=breached|due_soon|ok: the SLA status now (conversations without an SLA match none). ${VISIBILITY} ${VIEW_APPLIED}`,
  query: ListQuery.extend({ viewId: VIEW_ID }),
  paging: { limit: 50, max: 100 },
  responses: { 200: page(Conversation) },
});
inbox.op('GET /conversations/:id', {
  summary: 'One conversation with a page of its messages (newest first) and its timeline of messages and private notes',
  description: VISIBILITY,
  paging: { limit: 30, max: 100 },
  responses: { 200: ConversationDetail },
});
inbox.op('PUT /conversations/:id/assignee', {
  summary: 'Assign the conversation to a user (null: nobody) and optionally a team; agents may only take unassigned ones or hand back their own',
  body: Assign,
  responses: { 200: Conversation },
});
inbox.op('PUT /conversations/:id/priority', {
  summary: 'Set the priority (low, medium, high, urgent) or clear it with null',
  description: `Any role that works conversations may set it. A change publishes \`conversation.priority_changed\` (webhooks, automation trigger conversation_priority_changed); setting the priority it has changes nothing. ${VISIBILITY}`,
  body: SetPriority,
  responses: { 200: Conversation },
});
inbox.op('PUT /conversations/:id/status', {
  summary: 'Set the status; snoozed needs snoozedUntil (a future time)',
  body: SetStatus,
  responses: { 200: Conversation },
});
inbox.op('POST /conversations/bulk', {
  summary:
    'Assign, set the status of, file in a folder, mark read or run a macro on up to 1000 conversations; each id that fails is listed with its code',
  description:
    '`{action: "macro", macroId}` runs the macro on each conversation, one after another, as POST /conversations/{id}/macros/{macroId}/run does (each run audited as `macro.run`): ' +
    'a conversation counts as updated when every action succeeded there, and is otherwise listed with the code of its first failed action (the later actions still ran). ' +
    'A macroId the caller cannot run is 400 naming `macroId`.',
  body: BulkConversations,
  responses: { 200: reply('messaging', 'BulkUpdateConversations') },
});
inbox.op('POST /conversations/:id/archive', {
  summary: 'Archive the conversation (repeating it changes nothing)',
  responses: { 200: ConversationMove },
});
inbox.op('POST /conversations/:id/close', { summary: 'Close the conversation (repeating it changes nothing)', responses: { 200: ConversationMove } });
inbox.op('POST /conversations/:id/reopen', {
  summary: 'Reopen the conversation (active again; a snooze ends)',
  responses: { 200: ConversationMove },
});
inbox.op('POST /conversations/:id/read', { summary: 'Mark every message of the conversation read', responses: { 200: ConversationMove } });
inbox.op('POST /conversations/:id/unread', {
  summary: 'Mark the contact’s latest message unread (422 when the contact has not written yet)',
  responses: { 200: ConversationMove },
  errors: [422],
});

/** POST /conversations (internal and public): the conversation, and the first message when one was given. */
export const StartedConversation = z.object({ conversation: Conversation, message: SentMessage.nullable() });
export const START_CONVERSATION_DOC =
  'Reach someone who never wrote (an imported lead): give exactly one of `contactId`, `phone` (any Vietnamese spelling) or `chatnetUid`. ' +
  'The network user is the contact’s known uid on the network, else a lookup of its phone through the account (paced per account: 429 with Retry-After; cached a day). ' +
  'An existing conversation with them on the account answers 200 (two calls never make two); otherwise 201 with a new one (`type: "user"`), linked to the contact, ' +
  'or for `phone`/`chatnetUid` to the org’s contact with that phone or uid, created (named with the network’s display name) when there is none. ' +
  'The caller becomes the assignee. `message` is the first message sent when `content` or `attachments` were given, else null. ' +
  '422 `not_on_network` (naming `phone`), `no_phone` (the contact has none), `friend_required` (the user takes messages only from friends: the conversation is created, empty; ' +
  'send a friend request with POST /api/v1/chatnet-accounts/:id/friend-requests). 404: another org’s account or contact. 409 `account_not_connected`.';
inbox.op('POST /conversations', {
  summary: 'Start a conversation with a contact, phone number or network uid (optionally with a first message)',
  description: `${START_CONVERSATION_DOC} ${VISIBILITY}`,
  body: StartConversation,
  headers: [{ name: 'Idempotency-Key', description: 'for the first message: 1 to 255 characters; a repeated key answers with the first result' }],
  responses: { 200: StartedConversation, 201: StartedConversation },
  errors: [404, 409, 422, 503],
});

const messages = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Messages' });
messages.op('GET /messages/search', {
  summary: 'Messages holding every word of q (case and accents folded), best match first, then newest; each with a highlighted fragment',
  description: VISIBILITY,
  query: SearchQuery,
  paging: { limit: 20, max: 100 },
  responses: { 200: z.object({ data: z.array(SearchHit), pagination: Pagination }) },
});
messages.op('POST /conversations/:id/messages', {
  summary: 'Send a message (text and/or uploaded attachments) into the conversation through its chat-network account',
  description:
    'Send an Idempotency-Key header (or clientMessageId) so a retried request never sends twice; a replay answers the first result with `Idempotent-Replayed: true`. ' +
    '429 with Retry-After when the account’s send rate is reached; 422 when the account is not connected. ' +
    'With `sendAt` (a time in the future, at most 90 days ahead) nothing is sent now: the message is scheduled (202, a scheduled message) and sent at that time ' +
    'as this send would have been, once; `cancelIfReplied: true` cancels it when the contact writes first.',
  body: Send,
  headers: [{ name: 'Idempotency-Key', description: '1 to 255 characters; a repeated key answers with the first result (sends only)' }],
  responses: { 201: SentMessage, 202: ScheduledMessage },
  errors: [409, 422, 503],
});
messages.op('PUT /conversations/:id/messages/:messageId', {
  summary: 'Set a message’s read and/or replied flag',
  body: Flags,
  responses: { 200: Message },
});
messages.op('POST /messages/:id/recall', {
  summary: 'Recall (take back) a message the organization sent, on the chat network too',
  description:
    'Only an outbound message (else 400 `not_recallable`), within RECALL_WINDOW_MINUTES of sending it (default 1440; after it 409 `recall_window_passed`). ' +
    'The message keeps its content with `status: "recalled"` and `recalledAt`; `message.recalled` is published. 422 when the account is not connected. ' +
    VISIBILITY,
  responses: { 200: Message },
  errors: [409, 422, 503],
});
messages.op('PUT /messages/:id/reactions', {
  summary: 'Set the caller’s reaction on a message (it replaces theirs), on the chat network too',
  description:
    'One reaction per user; `message.reaction` is published. 422 when the account is not connected or the message was recalled. ' + VISIBILITY,
  body: ReactionBody,
  responses: { 200: Message },
  errors: [422, 503],
});
messages.op('DELETE /messages/:id/reactions', {
  summary: 'Take the caller’s reaction off a message, on the chat network too',
  description: 'Without a reaction of the caller nothing changes. ' + VISIBILITY,
  responses: { 200: Message },
  errors: [422, 503],
});

const settings = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Inbox settings' });
settings.op('GET /settings/inbox', {
  summary: 'Inbox settings: agent visibility, auto-close, the out-of-hours reply and CSAT (any role)',
  responses: { 200: InboxSettingsOut },
});
settings.op('PUT /settings/inbox', {
  summary: 'Change inbox settings (admins and owners); fields not sent keep their value',
  description:
    'A partial update: send at least one field. `autoCloseAfterMinutes` (1-43200, null: never) closes an active or pending conversation whose last message is ours after that many idle ' +
    'minutes, publishing `conversation.status_changed` with `changedBy: null`, `autoCloseMessage` sent first when set; a change re-plans the open conversations from their last message ' +
    '(one idle longer closes at once), null cancels every pending auto-close. `outOfHoursMessage` answers a contact writing while the account’s business hours (its own, else the ' +
    'organization’s) are closed, once per conversation and closed period. `csat: {enabled, message}` sends the question when a conversation closes; the contact’s first message within 24 h ' +
    'that is a rating (1-5, stars, or the faces 😡😞😐🙂😍) is stored as the conversation’s `csat` and published as `conversation.csat_received` (webhooks, automation trigger ' +
    'conversation_csat_received) without reopening the conversation; the message after it is its comment. Automatic messages have `source: "auto"`. 400 names the field; 403 below admin.',
  body: InboxSettings,
  responses: { 200: InboxSettingsOut },
});

const folders = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Chat folders' });
folders.op('GET /chat/folders', { summary: 'The organization’s chat folders with their conversation counts', responses: { 200: z.array(Folder) } });
folders.op('POST /chat/folders', {
  summary: 'Create a chat folder (names are unique in the organization)',
  body: NewFolder,
  responses: { 201: Folder },
  errors: [409],
});
folders.op('PUT /chat/folders/:id', { summary: 'Rename or recolor a chat folder', body: FolderPatch, responses: { 200: Folder }, errors: [409] });
folders.op('DELETE /chat/folders/:id', { summary: 'Delete a chat folder (its conversations stay)', responses: { 204: null } });
folders.op('POST /chat/folders/:id/conversations', {
  summary: 'File conversations in the folder (404 naming the first that is not the organization’s)',
  body: FolderConversations,
  responses: { 200: Folder },
});
folders.op('DELETE /chat/folders/:id/conversations/:conversationId', { summary: 'Take a conversation out of the folder', responses: { 204: null } });

const presets = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Chat presets' });
presets.op('GET /chat/presets', { summary: 'Saved replies, optionally of one category', query: PresetQuery, responses: { 200: z.array(Preset) } });
presets.op('POST /chat/presets', { summary: 'Save a reply', body: NewPreset, responses: { 201: Preset } });
presets.op('GET /chat/presets/:id', { summary: 'One saved reply', responses: { 200: Preset } });
presets.op('PUT /chat/presets/:id', { summary: 'Change a saved reply; only the fields sent change', body: PresetPatch, responses: { 200: Preset } });
presets.op('DELETE /chat/presets/:id', { summary: 'Delete a saved reply', responses: { 204: null } });

/** Attachment bytes stream through the gateway to messaging's HTTP endpoint (chat.routes `stream`). */
const attachments = area({ prefix: '/api/v1', auth: 'bearer', tag: 'Attachments' });
attachments.op('POST /chat/attachments', {
  summary: 'Upload a file to send with a message (multipart/form-data, field `file`); pass its id in a send’s attachments',
  description:
    '413 past the size limit (ATTACHMENT_MAX_BYTES) or when the organization’s storage for uploads (ATTACHMENTS_QUOTA_MB) is full — files received from the chat network ' +
    'have a quota of their own (ATTACHMENTS_INBOUND_QUOTA_MB); 400 when the bytes do not match the declared type.',
  body: 'file',
  responses: { 201: Attachment },
  errors: [413, 503],
});
attachments.op('GET /chat/attachments/:id', {
  summary: 'The file’s bytes, with its own Content-Type (images inline, anything else as a download)',
  description:
    '410 `attachment_expired` once ATTACHMENTS_RETENTION_DAYS (default 365) deleted the bytes; the message still lists the file, with `expiredAt`.',
  responses: { 200: 'binary' },
  errors: [410, 503],
});
attachments.op('DELETE /chat/attachments/:id', {
  summary: 'Delete an upload that was not sent: only the user who uploaded it',
  description:
    '409 `attachment_in_use` for a file sent with a message or waiting in a scheduled one (those are the conversation’s record); ' +
    '403 for another user’s upload; 404 for an unknown id or another organization’s; 400 naming `id` for a malformed one.',
  responses: { 204: null },
  errors: [400, 409],
});

export const chatOps = [
  ...inbox.ops,
  ...messages.ops,
  // Declared with their routes; here for the document's order of paths and tags.
  ...scheduledMessageRoutes.ops,
  ...macroRoutes.ops,
  ...conversationNoteRoutes.ops,
  ...settings.ops,
  ...folders.ops,
  ...presets.ops,
  ...attachments.ops,
];
