import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import type { CallContext } from '@crm/grpc-kit';
import { page } from './common.schemas';
import { badRequest, HttpError } from '../http/errors';
import { CURSOR_LISTS, nextCursor, publicPage } from '../http/cursor';
import { responseContract } from '../http/response-contract';
import { routeArea, type RouteInput } from '../http/route-area';
import { answered } from '../http/shape';
import { streamProxy } from '../http/stream-proxy';
import { dateRange, parseQuery } from '../http/validate';
import {
  conversationOut,
  countsOut,
  folderOut,
  headerOut,
  inboxSettingsOut,
  messageOut,
  moveOut,
  presetOut,
  publicConversationOut,
  publicMessageOut,
  searchHitOut,
  sentOut,
  timelineOut,
} from './chat.out';
import {
  Assign,
  Attachment,
  BulkConversations,
  BulkResult,
  Conversation,
  ConversationCounts,
  ConversationDetail,
  ConversationMove,
  Flags,
  Folder,
  FolderConversations,
  FolderPatch,
  id,
  idempotencyKey,
  InboxSettings,
  inboxSettingsIn,
  InboxSettingsOut,
  ListQuery,
  Message,
  NewFolder,
  NewPreset,
  Preset,
  PresetPatch,
  PresetQuery,
  PublicConversation,
  PublicMessage,
  PublicSend,
  PublicSent,
  ReactionBody,
  SearchHit,
  SearchQuery,
  Send,
  SentMessage,
  SetPriority,
  SetStatus,
  StartConversation,
  StartedConversation,
} from './chat.schemas';
import type { RouteDeps, ServiceRoutes } from './deps';
import { scheduledMessageOut } from './scheduled-messages.out';
import { ScheduledMessage } from './scheduled-messages.schemas';
import { paramsWithView } from './views.apply';
import { VIEW_APPLIED, VIEW_ID } from './views.schemas';
import { VIEW_COUNTS_MAX } from './view-counts';
import { Pagination } from './common.schemas';
import { nextCursorField } from './crm';

// Other areas' schemas read these from here (saved views: the list's query; macros: the priority rule).
export { ListQuery, SetPriority };

/** The idempotency key of a send: the `Idempotency-Key` header, else the body's `clientMessageId`. */
function keyOf(req: Request, fromBody?: string): string | undefined {
  const header = req.header('idempotency-key');
  if (header === undefined) return fromBody;
  const parsed = idempotencyKey.safeParse(header);
  if (!parsed.success) throw badRequest([{ field: 'Idempotency-Key', message: 'must be 1 to 255 characters' }]);
  return parsed.data;
}

/** A repeated Idempotency-Key answers with the first result; this header tells the client nothing was sent again. */
function flagReplay(res: Response, sent: { replayed: boolean }) {
  if (sent.replayed) res.setHeader('Idempotent-Replayed', 'true');
}

/**
 * Conversations, messages, sending, folders, presets and inbox settings (owned by messaging), internal API (bearer);
 * their public API (API key) below. Served and documented from these declarations; the attachment bytes too, streamed
 * through to messaging (attachmentBytesRoutes, on the stream router).
 */
export const inboxRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Conversations' });
export const messageRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Messages' });
export const inboxSettingsRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Inbox settings' });
export const folderRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Chat folders' });
export const presetRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Chat presets' });
export const attachmentRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Attachments' });
export const publicConversationRoutes = routeArea({ prefix: '/api/public', auth: 'apiKey', tag: 'Public: conversations' });
const messaging = (deps: RouteDeps) => deps.clients.messaging;

/**
 * How many conversations each of the caller's conversation views holds (the first VIEW_COUNTS_MAX by name), each
 * counted by the list itself (limit 1, its pagination.total), in parallel. A view whose saved filters the list no
 * longer takes is left out rather than failing the tab counts.
 */
async function viewCounts(deps: RouteDeps, ctx: CallContext): Promise<Record<string, number>> {
  const views = await deps.clients.messagingViews.ListViews({ resource: 'conversations', page: 1, limit: VIEW_COUNTS_MAX }, ctx);
  const counted = await Promise.all(
    views.data.map(async (v) => {
      let filters;
      try {
        filters = parseQuery(v.filters, ListQuery);
      } catch (err) {
        if (err instanceof HttpError) return undefined;
        throw err;
      }
      const out = await messaging(deps).ListConversations({ ...filters, page: 1, limit: 1 }, ctx);
      return [v.id, out.pagination?.total ?? 0] as const;
    }),
  );
  return Object.fromEntries(counted.filter((c) => c !== undefined));
}

/** POST …/conversations: 201 with a new conversation, 200 with the one that exists; `message` null without content. */
async function startConversation(
  { req, body: b, ctx, deps, answerWith }: RouteInput<unknown, z.output<typeof StartConversation>>,
  source: 'ui' | 'public_api',
) {
  const out = await messaging(deps).StartConversation(
    {
      chatnetAccountId: b.chatnetAccountId,
      contactId: b.contactId,
      phone: b.phone,
      chatnetUid: b.chatnetUid,
      content: b.content,
      contentType: b.contentType || 'text',
      attachmentIds: b.attachments,
      clientMessageId: keyOf(req, b.clientMessageId) ?? '',
      source,
    },
    ctx,
    b.attachments.length ? { deadlineMs: deps.config.GRPC_FILE_SEND_DEADLINE_MS } : undefined,
  );
  if (!out.created) answerWith(200);
  return {
    conversation: conversationOut(answered(out.conversation, 'messaging StartConversation: conversation')),
    message: out.message ? sentOut(out.message) : null,
  };
}

const VISIBILITY =
  'With inbox visibility `assigned`, an agent sees only the conversations assigned to them and the unassigned ones of their accounts; others answer 404.';

inboxRoutes.route('GET /conversations/counts', {
  summary:
    'Conversation counts for the inbox tabs (total, unread, unreplied, archived, mine, unassigned) and for each of the caller’s saved conversation views',
  response: ConversationCounts,
  handler: async ({ ctx, deps }) => {
    const [counts, views] = await Promise.all([messaging(deps).GetCounts({}, ctx), viewCounts(deps, ctx)]);
    return countsOut(counts, views);
  },
});
inboxRoutes.route('GET /conversations', {
  summary:
    'Conversations, filtered (status, account, folder, assignee, priority, SLA status, unread…) and sorted by last message, creation, priority or SLA due time',
  description: `sortBy=priority: urgent first, then high, medium, low, and the conversations without a priority last (direction asc: low first, still none last); newest message first within a priority. sortBy=slaDue: the nearest pending SLA due time first (an overdue one included; direction desc: the furthest first), conversations without one last. sla=breached|due_soon|ok: the SLA status now (conversations without an SLA match none). ${VISIBILITY} ${VIEW_APPLIED}`,
  // Parsed by the handler: a saved view's filters first, then the request's own (views.apply.ts).
  query: ListQuery.extend({ viewId: VIEW_ID }),
  ownQuery: true,
  paging: { limit: 50, max: 100 },
  response: page(Conversation),
  handler: async ({ req, res, page, ctx, deps }) => {
    const params = await paramsWithView(() => deps.clients.messagingViews, req, res, 'conversations');
    const out = await messaging(deps).ListConversations({ ...page, ...parseQuery(params, ListQuery) }, ctx);
    return { data: out.data.map(conversationOut), pagination: out.pagination! };
  },
});
inboxRoutes.route('GET /conversations/:id', {
  summary: 'One conversation with a page of its messages (newest first) and its timeline of messages and private notes',
  description: VISIBILITY,
  paging: { limit: 30, max: 100 },
  response: ConversationDetail,
  handler: async ({ param, page, ctx, deps }) => {
    const out = await messaging(deps).GetConversation({ id: param('id'), ...page }, ctx);
    const conversation = headerOut(answered(out.conversation, 'messaging GetConversation: conversation'));
    return { conversation, messages: out.messages.map(messageOut), pagination: out.pagination!, timeline: out.timeline.map(timelineOut) };
  },
});
inboxRoutes.route('PUT /conversations/:id/assignee', {
  summary: 'Assign the conversation to a user (null: nobody) and optionally a team; agents may only take unassigned ones or hand back their own',
  body: Assign,
  response: Conversation,
  handler: async ({ param, body: b, ctx, deps }) =>
    conversationOut(
      await messaging(deps).AssignConversation(
        { id: param('id'), userId: b.userId ?? undefined, teamId: b.teamId ?? undefined, teamIdSet: b.teamId !== undefined },
        ctx,
      ),
    ),
});
inboxRoutes.route('PUT /conversations/:id/priority', {
  summary: 'Set the priority (low, medium, high, urgent) or clear it with null',
  description: `Any role that works conversations may set it. A change publishes \`conversation.priority_changed\` (webhooks, automation trigger conversation_priority_changed); setting the priority it has changes nothing. ${VISIBILITY}`,
  body: SetPriority,
  response: Conversation,
  handler: async ({ param, body: b, ctx, deps }) =>
    conversationOut(await messaging(deps).SetConversationPriority({ id: param('id'), priority: b.priority ?? '' }, ctx)),
});
inboxRoutes.route('PUT /conversations/:id/status', {
  summary: 'Set the status; snoozed needs snoozedUntil (a future time)',
  body: SetStatus,
  response: Conversation,
  handler: async ({ param, body: b, ctx, deps }) =>
    conversationOut(await messaging(deps).SetConversationStatus({ id: param('id'), status: b.status, snoozedUntil: b.snoozedUntil }, ctx)),
});
inboxRoutes.route('POST /conversations/bulk', {
  summary:
    'Assign, set the status of, file in a folder, mark read or run a macro on up to 1000 conversations; each id that fails is listed with its code',
  description:
    '`{action: "macro", macroId}` runs the macro on each conversation, one after another, as POST /conversations/{id}/macros/{macroId}/run does (each run audited as `macro.run`): ' +
    'a conversation counts as updated when every action succeeded there, and is otherwise listed with the code of its first failed action (the later actions still ran). ' +
    'A macroId the caller cannot run is 400 naming `macroId`.',
  body: BulkConversations,
  response: BulkResult,
  handler: async ({ body: b, ctx, deps }) => {
    const params =
      b.action === 'assign'
        ? { userId: b.userId ?? undefined, teamId: b.teamId ?? undefined, teamIdSet: b.teamId !== undefined }
        : b.action === 'status'
          ? { status: b.status, snoozedUntil: b.snoozedUntil }
          : b.action === 'folder'
            ? { folderId: b.folderId }
            : b.action === 'macro'
              ? { macroId: b.macroId }
              : {};
    const out = await messaging(deps).BulkUpdateConversations({ ids: b.ids, action: b.action, ...params }, ctx);
    return { updated: out.updated, failed: out.failed ?? [] };
  },
});
inboxRoutes.route('POST /conversations/:id/archive', {
  summary: 'Archive the conversation (repeating it changes nothing)',
  response: ConversationMove,
  handler: async ({ param, ctx, deps }) => moveOut(await messaging(deps).ArchiveConversation({ id: param('id') }, ctx)),
});
inboxRoutes.route('POST /conversations/:id/close', {
  summary: 'Close the conversation (repeating it changes nothing)',
  response: ConversationMove,
  handler: async ({ param, ctx, deps }) => moveOut(await messaging(deps).CloseConversation({ id: param('id') }, ctx)),
});
inboxRoutes.route('POST /conversations/:id/reopen', {
  summary: 'Reopen the conversation (active again; a snooze ends)',
  response: ConversationMove,
  handler: async ({ param, ctx, deps }) => moveOut(await messaging(deps).ReopenConversation({ id: param('id') }, ctx)),
});
inboxRoutes.route('POST /conversations/:id/read', {
  summary: 'Mark every message of the conversation read',
  response: ConversationMove,
  handler: async ({ param, ctx, deps }) => moveOut(await messaging(deps).MarkConversationRead({ id: param('id') }, ctx)),
});
inboxRoutes.route('POST /conversations/:id/unread', {
  summary: 'Mark the contact’s latest message unread (422 when the contact has not written yet)',
  response: ConversationMove,
  errors: [422],
  handler: async ({ param, ctx, deps }) => moveOut(await messaging(deps).MarkConversationUnread({ id: param('id') }, ctx)),
});

const START_CONVERSATION_DOC =
  'Reach someone who never wrote (an imported lead): give exactly one of `contactId`, `phone` (any Vietnamese spelling) or `chatnetUid`. ' +
  'The network user is the contact’s known uid on the network, else a lookup of its phone through the account (paced per account: 429 with Retry-After; cached a day). ' +
  'An existing conversation with them on the account answers 200 (two calls never make two); otherwise 201 with a new one (`type: "user"`), linked to the contact, ' +
  'or for `phone`/`chatnetUid` to the org’s contact with that phone or uid, created (named with the network’s display name) when there is none. ' +
  'The caller becomes the assignee. `message` is the first message sent when `content` or `attachments` were given, else null. ' +
  '422 `not_on_network` (naming `phone`), `no_phone` (the contact has none), `friend_required` (the user takes messages only from friends: the conversation is created, empty; ' +
  'send a friend request with POST /api/v1/chatnet-accounts/:id/friend-requests). 404: another org’s account or contact. 409 `account_not_connected`.';
inboxRoutes.route('POST /conversations', {
  summary: 'Start a conversation with a contact, phone number or network uid (optionally with a first message)',
  description: `${START_CONVERSATION_DOC} ${VISIBILITY}`,
  body: StartConversation,
  headers: [{ name: 'Idempotency-Key', description: 'for the first message: 1 to 255 characters; a repeated key answers with the first result' }],
  status: 201,
  response: StartedConversation,
  also: { status: 200, response: StartedConversation },
  errors: [404, 409, 422, 503],
  handler: (input) => startConversation(input, 'ui'),
});

messageRoutes.route('GET /messages/search', {
  summary: 'Messages holding every word of q (case and accents folded), best match first, then newest; each with a highlighted fragment',
  description: VISIBILITY,
  query: SearchQuery,
  paging: { limit: 20, max: 100 },
  response: z.object({ data: z.array(SearchHit), pagination: Pagination }),
  handler: async ({ query: { q, conversationId, chatnetAccountId, from, to }, page, ctx, deps }) => {
    const range = dateRange(from, to, 'from', 'to');
    const out = await messaging(deps).SearchMessages({ q, conversationId, chatnetAccountId, ...range, ...page }, ctx);
    return { data: out.data.map(searchHitOut), pagination: out.pagination! };
  },
});
messageRoutes.route('POST /conversations/:id/messages', {
  summary: 'Send a message (text and/or uploaded attachments) into the conversation through its chat-network account',
  description:
    'Send an Idempotency-Key header (or clientMessageId) so a retried request never sends twice; a replay answers the first result with `Idempotent-Replayed: true`. ' +
    '429 with Retry-After when the account’s send rate is reached; 422 when the account is not connected. ' +
    'With `sendAt` (a time in the future, at most 90 days ahead) nothing is sent now: the message is scheduled (202, a scheduled message) and sent at that time ' +
    'as this send would have been, once; `cancelIfReplied: true` cancels it when the contact writes first.',
  body: Send,
  headers: [{ name: 'Idempotency-Key', description: '1 to 255 characters; a repeated key answers with the first result (sends only)' }],
  status: 201,
  response: SentMessage,
  also: { status: 202, response: ScheduledMessage },
  errors: [409, 422, 503],
  handler: async ({ req, res, param, body: b, ctx, deps, answerWith }) => {
    if (b.sendAt) {
      const scheduled = await messaging(deps).ScheduleMessage(
        {
          conversationId: param('id'),
          content: b.content,
          contentType: b.contentType || 'text',
          attachmentIds: b.attachments,
          sendAt: b.sendAt,
          cancelIfReplied: b.cancelIfReplied === true,
        },
        ctx,
      );
      answerWith(202);
      return scheduledMessageOut(scheduled);
    }
    const sent = await messaging(deps).SendMessage(
      {
        conversationId: param('id'),
        content: b.content,
        contentType: b.contentType || 'text',
        clientMessageId: keyOf(req, b.clientMessageId) ?? '',
        source: 'ui',
        attachmentIds: b.attachments,
        replyToMessageId: b.replyToMessageId ?? '',
      },
      ctx,
      b.attachments.length ? { deadlineMs: deps.config.GRPC_FILE_SEND_DEADLINE_MS } : undefined,
    );
    flagReplay(res, sent);
    return sentOut(sent);
  },
});
messageRoutes.route('PUT /conversations/:id/messages/:messageId', {
  summary: 'Set a message’s read and/or replied flag',
  body: Flags,
  response: Message,
  handler: async ({ param, body, ctx, deps }) =>
    messageOut(await messaging(deps).UpdateMessageFlags({ conversationId: param('id'), messageId: param('messageId'), ...body }, ctx)),
});
messageRoutes.route('POST /messages/:id/recall', {
  summary: 'Recall (take back) a message the organization sent, on the chat network too',
  description:
    'Only an outbound message (else 400 `not_recallable`), within RECALL_WINDOW_MINUTES of sending it (default 1440; after it 409 `recall_window_passed`). ' +
    'The message keeps its content with `status: "recalled"` and `recalledAt`; `message.recalled` is published. 422 when the account is not connected. ' +
    VISIBILITY,
  response: Message,
  errors: [409, 422, 503],
  handler: async ({ param, ctx, deps }) => messageOut(await messaging(deps).RecallMessage({ id: param('id') }, ctx)),
});
messageRoutes.route('PUT /messages/:id/reactions', {
  summary: 'Set the caller’s reaction on a message (it replaces theirs), on the chat network too',
  description:
    'One reaction per user; `message.reaction` is published. 422 when the account is not connected or the message was recalled. ' + VISIBILITY,
  body: ReactionBody,
  response: Message,
  errors: [422, 503],
  handler: async ({ param, body: b, ctx, deps }) => messageOut(await messaging(deps).ReactToMessage({ id: param('id'), emoji: b.emoji }, ctx)),
});
messageRoutes.route('DELETE /messages/:id/reactions', {
  summary: 'Take the caller’s reaction off a message, on the chat network too',
  description: 'Without a reaction of the caller nothing changes. ' + VISIBILITY,
  response: Message,
  errors: [422, 503],
  handler: async ({ param, ctx, deps }) => messageOut(await messaging(deps).RemoveReaction({ id: param('id') }, ctx)),
});

inboxSettingsRoutes.route('GET /settings/inbox', {
  summary: 'Inbox settings: agent visibility, auto-close, the out-of-hours reply and CSAT (any role)',
  response: InboxSettingsOut,
  handler: async ({ ctx, deps }) => inboxSettingsOut(await messaging(deps).GetInboxSettings({}, ctx)),
});
inboxSettingsRoutes.route('PUT /settings/inbox', {
  summary: 'Change inbox settings (admins and owners); fields not sent keep their value',
  description:
    'A partial update: send at least one field. `autoCloseAfterMinutes` (1-43200, null: never) closes an active or pending conversation whose last message is ours after that many idle ' +
    'minutes, publishing `conversation.status_changed` with `changedBy: null`, `autoCloseMessage` sent first when set; a change re-plans the open conversations from their last message ' +
    '(one idle longer closes at once), null cancels every pending auto-close. `outOfHoursMessage` answers a contact writing while the account’s business hours (its own, else the ' +
    'organization’s) are closed, once per conversation and closed period. `csat: {enabled, message}` sends the question when a conversation closes; the contact’s first message within 24 h ' +
    'that is a rating (1-5, stars, or the faces 😡😞😐🙂😍) is stored as the conversation’s `csat` and published as `conversation.csat_received` (webhooks, automation trigger ' +
    'conversation_csat_received) without reopening the conversation; the message after it is its comment. Automatic messages have `source: "auto"`. 400 names the field; 403 below admin.',
  body: InboxSettings,
  response: InboxSettingsOut,
  handler: async ({ body, ctx, deps }) => inboxSettingsOut(await messaging(deps).UpdateInboxSettings(inboxSettingsIn(body), ctx)),
});

folderRoutes.route('GET /chat/folders', {
  summary: 'The organization’s chat folders with their conversation counts',
  response: z.array(Folder),
  handler: async ({ ctx, deps }) => (await messaging(deps).ListFolders({}, ctx)).data.map(folderOut),
});
folderRoutes.route('POST /chat/folders', {
  summary: 'Create a chat folder (names are unique in the organization)',
  body: NewFolder,
  status: 201,
  response: Folder,
  errors: [409],
  handler: async ({ body, ctx, deps }) => folderOut(await messaging(deps).CreateFolder(body, ctx)),
});
folderRoutes.route('PUT /chat/folders/:id', {
  summary: 'Rename or recolor a chat folder',
  body: FolderPatch,
  response: Folder,
  errors: [409],
  handler: async ({ param, body, ctx, deps }) => folderOut(await messaging(deps).UpdateFolder({ id: param('id'), ...body }, ctx)),
});
folderRoutes.route('DELETE /chat/folders/:id', {
  summary: 'Delete a chat folder (its conversations stay)',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await messaging(deps).DeleteFolder({ id: param('id') }, ctx);
  },
});
folderRoutes.route('POST /chat/folders/:id/conversations', {
  summary: 'File conversations in the folder (404 naming the first that is not the organization’s)',
  body: FolderConversations,
  response: Folder,
  handler: async ({ param, body, ctx, deps }) => folderOut(await messaging(deps).AddConversationsToFolder({ folderId: param('id'), ...body }, ctx)),
});
folderRoutes.route('DELETE /chat/folders/:id/conversations/:conversationId', {
  summary: 'Take a conversation out of the folder',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await messaging(deps).RemoveConversationFromFolder({ folderId: param('id'), conversationId: param('conversationId') }, ctx);
  },
});

presetRoutes.route('GET /chat/presets', {
  summary: 'Saved replies, optionally of one category',
  query: PresetQuery,
  response: z.array(Preset),
  handler: async ({ query: { category }, ctx, deps }) => (await messaging(deps).ListPresets({ category }, ctx)).data.map(presetOut),
});
presetRoutes.route('POST /chat/presets', {
  summary: 'Save a reply',
  body: NewPreset,
  status: 201,
  response: Preset,
  handler: async ({ body, ctx, deps }) => presetOut(await messaging(deps).CreatePreset(body, ctx)),
});
presetRoutes.route('GET /chat/presets/:id', {
  summary: 'One saved reply',
  response: Preset,
  handler: async ({ param, ctx, deps }) => presetOut(await messaging(deps).GetPreset({ id: param('id') }, ctx)),
});
presetRoutes.route('PUT /chat/presets/:id', {
  summary: 'Change a saved reply; only the fields sent change',
  body: PresetPatch,
  response: Preset,
  handler: async ({ param, body, ctx, deps }) => presetOut(await messaging(deps).UpdatePreset({ id: param('id'), ...body }, ctx)),
});
presetRoutes.route('DELETE /chat/presets/:id', {
  summary: 'Delete a saved reply',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await messaging(deps).DeletePreset({ id: param('id') }, ctx);
  },
});

attachmentRoutes.route('DELETE /chat/attachments/:id', {
  summary: 'Delete an upload that was not sent: only the user who uploaded it',
  description:
    '409 `attachment_in_use` for a file sent with a message or waiting in a scheduled one (those are the conversation’s record); ' +
    '403 for another user’s upload; 404 for an unknown id or another organization’s; 400 naming `id` for a malformed one.',
  status: 204,
  response: null,
  errors: [400, 409],
  handler: async ({ param, ctx, deps }) => {
    const attachmentId = id().safeParse(param('id'));
    if (!attachmentId.success) throw badRequest([{ field: 'id', message: 'must be an attachment id' }]);
    await messaging(deps).DeleteAttachment({ id: attachmentId.data }, ctx);
  },
});

/**
 * Attachment bytes stream through: authenticated here (bearer, with its rate limit), then proxied to messaging's HTTP
 * endpoint with the caller signed for messaging, body and answer untouched. Mounted before any body parser.
 */
export const attachmentBytesRoutes = routeArea({
  prefix: '/api/v1',
  auth: 'bearer',
  tag: 'Attachments',
  middleware: (deps) => [deps.auth.bearer],
});
/** The proxy for one of messaging's HTTP operations (named like its HTTP_OPERATIONS: an upload's credential is worthless for a download and the reverse). */
const toMessaging =
  (operation: 'UploadAttachment' | 'DownloadAttachment') =>
  ({ config, internalAuth, streamAgent, log }: RouteDeps) => [
    streamProxy({
      target: config.MESSAGING_HTTP_URL,
      operationOf: () => `messaging.v1.Http/${operation}`,
      pathOf: (req) => (typeof req.params.id === 'string' ? `/v1/attachments/${encodeURIComponent(req.params.id)}` : '/v1/attachments'),
      auth: internalAuth,
      agent: streamAgent,
      log,
      serviceName: 'messaging',
    }),
  ];
attachmentBytesRoutes.route('POST /chat/attachments', {
  summary: 'Upload a file to send with a message (multipart/form-data, field `file`); pass its id in a send’s attachments',
  description:
    '413 past the size limit (ATTACHMENT_MAX_BYTES) or when the organization’s storage for uploads (ATTACHMENTS_QUOTA_MB) is full — files received from the chat network ' +
    'have a quota of their own (ATTACHMENTS_INBOUND_QUOTA_MB); 400 when the bytes do not match the declared type.',
  middleware: toMessaging('UploadAttachment'),
  body: 'file',
  status: 201,
  response: Attachment,
  errors: [413, 503],
});
attachmentBytesRoutes.route('GET /chat/attachments/:id', {
  summary: 'The file’s bytes, with its own Content-Type (images inline, anything else as a download)',
  description:
    '410 `attachment_expired` once ATTACHMENTS_RETENTION_DAYS (default 365) deleted the bytes; the message still lists the file, with `expiredAt`.',
  middleware: toMessaging('DownloadAttachment'),
  response: 'binary',
  errors: [410, 503],
});

// ------------------------------------------------------------------------------------------- public API

publicConversationRoutes.route('GET /conversations', {
  scope: 'conversations:read',
  summary: 'List conversations, most recent message first (with updatedSince: least recently changed first)',
  paging: { limit: 20, max: 100, limitOnly: true, cursor: 'updatedAt' },
  response: z.object({ conversations: z.array(PublicConversation), nextCursor: nextCursorField }),
  handler: async ({ req, ctx, deps }) => {
    const { limit, keyset } = publicPage(req, CURSOR_LISTS.conversations, 20, 100);
    const out = await messaging(deps).ListPublicConversations({ limit, keyset }, ctx);
    return { conversations: out.conversations.map(publicConversationOut), nextCursor: nextCursor(CURSOR_LISTS.conversations, keyset, out.next) };
  },
});
publicConversationRoutes.route('GET /conversations/:id/messages', {
  scope: 'conversations:read',
  summary: 'Messages of one conversation of the organization, newest first (with updatedSince: oldest first)',
  paging: { limit: 50, max: 200, limitOnly: true, cursor: 'sentAt' },
  response: z.object({ messages: z.array(PublicMessage), nextCursor: nextCursorField }),
  handler: async ({ req, param, ctx, deps }) => {
    const { limit, keyset } = publicPage(req, CURSOR_LISTS.messages, 50, 200);
    const out = await messaging(deps).ListPublicMessages({ conversationId: param('id'), limit, keyset }, ctx);
    return { messages: out.messages.map(publicMessageOut), nextCursor: nextCursor(CURSOR_LISTS.messages, keyset, out.next) };
  },
});
publicConversationRoutes.route('GET /messages/:id', {
  scope: 'conversations:read',
  summary: 'One message of the organization (e.g. the messageId a send returned)',
  response: PublicMessage,
  handler: async ({ param, ctx, deps }) => {
    // A malformed id is the caller's mistake (400); a well-formed unknown or another org's one is 404 from messaging.
    const messageId = id().safeParse(param('id'));
    if (!messageId.success) throw badRequest([{ field: 'id', message: 'must be a message id' }]);
    return publicMessageOut(await messaging(deps).GetPublicMessage({ id: messageId.data }, ctx));
  },
});
publicConversationRoutes.route('POST /messages/send', {
  scope: 'messages:send',
  summary: 'Send a message through a connected chat-network account of the organization',
  description:
    'Send an Idempotency-Key header (or clientMessageId) so a retried request never sends twice; a replay answers the first result with `Idempotent-Replayed: true`.',
  body: PublicSend,
  headers: [{ name: 'Idempotency-Key', description: '1 to 255 characters; a repeated key answers with the first result' }],
  response: PublicSent,
  errors: [404, 409, 422, 503],
  handler: async ({ req, res, body: b, ctx, deps }) => {
    const sent = await messaging(deps).SendToThread(
      {
        chatnetAccountId: b.chatnetAccountId,
        threadId: b.threadId,
        threadType: b.threadType,
        content: b.content,
        contentType: b.contentType || 'text',
        clientMessageId: keyOf(req, b.clientMessageId) ?? '',
        source: 'public_api',
        replyToMessageId: b.replyToMessageId ?? '',
      },
      ctx,
    );
    // The stored message's id and delivery status (sent; seen later): GET /api/public/messages/:id reads it back.
    flagReplay(res, sent);
    return { success: true as const, messageId: sent.id, status: sent.status };
  },
});
publicConversationRoutes.route('POST /conversations', {
  scope: 'messages:send',
  summary: 'Start a conversation with a contact, phone number or network uid (optionally with a first message)',
  description: START_CONVERSATION_DOC,
  body: StartConversation,
  headers: [{ name: 'Idempotency-Key', description: 'for the first message: 1 to 255 characters; a repeated key answers with the first result' }],
  status: 201,
  response: StartedConversation,
  also: { status: 200, response: StartedConversation },
  errors: [404, 409, 422, 503],
  handler: (input) => startConversation(input, 'public_api'),
});

/** The internal areas in the document's order (docs/index.ts places the ones of other files between them). */
export const chatInternalAreas = [inboxRoutes, messageRoutes, inboxSettingsRoutes, folderRoutes, presetRoutes, attachmentRoutes];

/** Conversations, messages, sending, folders, presets and attachments: everything messaging owns. */
export function chatRoutes(deps: RouteDeps): ServiceRoutes {
  const contract = responseContract(deps.config);
  return {
    internal: Router().use(...chatInternalAreas.map((area) => area.router(deps, contract))),
    public: publicConversationRoutes.router(deps, contract),
    stream: attachmentBytesRoutes.router(deps, contract),
  };
}
