import { Request, Response, Router } from 'express';
import { z } from 'zod';
import { isUuid, messagingRules as rules } from '@crm/validation';
import type { RouteDeps, ServiceRoutes } from './deps';
import { badRequest, HttpError } from '../http/errors';
import { ctxOf } from '../http/principal';
import { requireScope } from '../http/scopes';
import { streamProxy } from '../http/stream-proxy';
import { CURSOR_LISTS, nextCursor, publicPage } from '../http/cursor';
import { answered } from '../http/shape';
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
import { body, dateRange, pageParams, parseDateOrTime, parseQuery, pathParam, query, s } from '../http/validate';
import { paramsWithView } from './views.apply';
import { scheduledMessageOut } from './scheduled-messages.out';
import { sendAt } from './send-at';
import { VIEW_COUNTS_MAX } from './view-counts';

const id = () => z.string().trim().uuid('must be an id');
const bool = z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true');
const idempotencyKey = z.string().trim().min(1).max(rules.IDEMPOTENCY_KEY_MAX, `must be at most ${rules.IDEMPOTENCY_KEY_MAX} characters`);
const STATUSES = rules.CONVERSATION_STATUSES;
/** A message body of at most CONTENT_MAX characters. */
const content = (absent: string) => z.string({ error: absent }).max(rules.CONTENT_MAX, `must be at most ${rules.CONTENT_MAX} characters`);
/** Empty is the default (text), as in messaging. */
const contentType = z
  .string({ error: rules.CONTENT_TYPE_MESSAGE })
  .trim()
  .refine((v) => v === '' || rules.CONTENT_TYPE_PATTERN.test(v), rules.CONTENT_TYPE_MESSAGE)
  .default(rules.DEFAULT_CONTENT_TYPE);

export const ListQuery = z.object({
  status: s.optionalQueryEnum(STATUSES),
  type: s.optionalQueryEnum(rules.THREAD_TYPES),
  search: z.string().max(rules.SEARCH_TERM_MAX, `must be at most ${rules.SEARCH_TERM_MAX} characters`).optional(),
  sortBy: s.optionalQueryEnum(rules.CONVERSATION_SORTS),
  direction: s.optionalQueryEnum(rules.SORT_DIRECTIONS),
  folderId: id().optional(),
  chatnetAccountId: id().optional(),
  contactId: id().optional(),
  unread: bool.optional(),
  unreplied: bool.optional(),
  assigneeId: z
    .string()
    .trim()
    .refine((v) => (rules.ASSIGNEE_FILTER_WORDS as readonly string[]).includes(v) || isUuid(v), rules.ASSIGNEE_FILTER_MESSAGE)
    .optional(),
  teamId: id().optional(),
  priority: s.optionalQueryEnum(rules.PRIORITY_FILTERS).describe('one priority, or none for the conversations without one'),
  sla: s.optionalQueryEnum(rules.SLA_STATUSES).describe('the SLA status now; conversations without an SLA match none'),
});

const nullableId = () =>
  z.union([z.null(), z.string().trim().uuid()], {
    error: (issue) => (issue.input === undefined ? 'is required (an id, or null)' : 'must be an id or null'),
  });

// userId is required (null = nobody); teamId left out keeps the conversation's team.
export const Assign = z.object({ userId: nullableId(), teamId: nullableId().optional() });

export const SetStatus = z
  .object({
    status: s.enumOf(STATUSES),
    // An ISO timestamp in years 1-9999, sent on as its UTC instant; whether it lies ahead is messaging's call.
    snoozedUntil: z
      .union([z.null(), s.timestamp()], { error: rules.SNOOZE_TIMESTAMP_MESSAGE })
      .optional()
      .transform((v) => (v ? parseDateOrTime(v.trim())!.at.toISOString() : undefined)),
  })
  .refine((b) => b.status === 'snoozed' || b.snoozedUntil === undefined, { path: ['snoozedUntil'], message: rules.SNOOZE_ONLY_WHEN_SNOOZED })
  .refine((b) => b.status !== 'snoozed' || b.snoozedUntil !== undefined, { path: ['snoozedUntil'], message: rules.SNOOZE_REQUIRED });

/** PUT /conversations/:id/priority: one of the priorities, or null for none (issue #29). */
export const SetPriority = z.object({
  priority: z.union([z.null(), z.enum(rules.CONVERSATION_PRIORITIES)], {
    error: (issue) => (issue.input === undefined ? `is required (${rules.PRIORITY_MESSAGE.replace('must be ', '')})` : rules.PRIORITY_MESSAGE),
  }),
});

const BULK_MAX_IDS = rules.BULK_MAX_IDS;
export const BulkIds = z
  .array(z.string({ error: 'must be an array of ids' }), { error: 'must be an array of ids' })
  .min(1, 'must list at least one id')
  .max(BULK_MAX_IDS, `must list at most ${BULK_MAX_IDS} ids`);

// Each action's parameters; ids that are malformed or not the org's fail one by one in the answer, not here.
export const BulkConversations = z.discriminatedUnion(
  'action',
  [
    z.object({ ids: BulkIds, action: z.literal('assign'), userId: nullableId(), teamId: nullableId().optional() }),
    z.object({ ids: BulkIds, action: z.literal('status'), status: s.enumOf(STATUSES), snoozedUntil: SetStatus.shape.snoozedUntil }),
    z.object({ ids: BulkIds, action: z.literal('folder'), folderId: z.string({ error: 'is required' }).trim().uuid('must be an id') }),
    z.object({ ids: BulkIds, action: z.literal('read') }),
    // The macro runs on each conversation as POST /conversations/:id/macros/:macroId/run would (issue #29).
    z.object({ ids: BulkIds, action: z.literal('macro'), macroId: z.string({ error: 'is required' }).trim().uuid('must be a macro id') }),
  ],
  { error: `must be one of ${rules.BULK_ACTIONS.join(', ')}` },
);

/** A message the inbox sends by itself: text, or null for none. */
const autoMessage = () =>
  z
    .string({ error: 'must be text or null' })
    .max(rules.AUTO_MESSAGE_MAX, `must be at most ${rules.AUTO_MESSAGE_MAX} characters`)
    .nullable()
    .optional();

/** PUT /settings/inbox: a partial update, every field optional (one absent keeps its value), at least one sent. */
export const InboxSettings = z
  .object({
    agentVisibility: s.enumOf(rules.AGENT_VISIBILITIES).optional(),
    autoCloseAfterMinutes: z
      .number({ error: rules.AUTO_CLOSE_MINUTES_MESSAGE })
      .int(rules.AUTO_CLOSE_MINUTES_MESSAGE)
      .min(1, rules.AUTO_CLOSE_MINUTES_MESSAGE)
      .max(rules.AUTO_CLOSE_MAX_MINUTES, rules.AUTO_CLOSE_MINUTES_MESSAGE)
      .nullable()
      .optional(),
    autoCloseMessage: autoMessage(),
    outOfHoursMessage: autoMessage(),
    csat: z
      .object(
        {
          enabled: z.boolean({ error: 'must be true or false' }),
          message: z
            .string({ error: 'must be text' })
            .trim()
            .min(1, 'must not be blank')
            .max(rules.AUTO_MESSAGE_MAX, `must be at most ${rules.AUTO_MESSAGE_MAX} characters`)
            .optional(),
        },
        { error: 'must be an object {enabled, message}' },
      )
      .optional(),
  })
  .superRefine((v, ctx) => {
    if (Object.values(v).every((x) => x === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['agentVisibility'],
        message: 'send at least one of agentVisibility, autoCloseAfterMinutes, autoCloseMessage, outOfHoursMessage, csat',
      });
    }
  });

/** The update as messaging takes it: absent fields stay absent; null is 0 (minutes) or "" (messages). */
export function inboxSettingsIn(b: z.infer<typeof InboxSettings>) {
  const nullable = <T>(v: T | null | undefined, none: T) => (v === undefined ? undefined : (v ?? none));
  return {
    agentVisibility: b.agentVisibility,
    autoCloseAfterMinutes: nullable(b.autoCloseAfterMinutes, 0),
    autoCloseMessage: nullable(b.autoCloseMessage, ''),
    outOfHoursMessage: nullable(b.outOfHoursMessage, ''),
    csat: b.csat ? { enabled: b.csat.enabled, message: b.csat.message ?? '' } : undefined,
  };
}

export const SearchQuery = z.object({
  q: z
    .string({ error: 'is required' })
    .trim()
    .min(rules.SEARCH_QUERY_MIN, rules.SEARCH_QUERY_TOO_SHORT)
    .max(rules.SEARCH_TERM_MAX, `must be at most ${rules.SEARCH_TERM_MAX} characters`),
  conversationId: z.string().optional(),
  chatnetAccountId: id().optional(),
  from: s.dateOrTimestamp().optional(),
  to: s.dateOrTimestamp().optional(),
});

/** `attachments` in a send: attachment ids, or objects carrying one (`{id}`), as returned by the upload. */
const attachmentRefs = z
  .array(z.union([z.string(), z.object({ id: z.string() })]), { error: 'must be an array of attachment ids' })
  .max(rules.MAX_ATTACHMENTS, rules.TOO_MANY_ATTACHMENTS)
  .transform((list) => list.map((a) => (typeof a === 'string' ? a : a.id)));

/** A message of the same conversation the new one replies to (quotes); whether it is one is messaging's call. */
const replyToMessageId = z.string({ error: 'must be a message id' }).trim().uuid('must be a message id').optional();

export const Send = z
  .object({
    content: content('must be a string').default(''),
    contentType,
    attachments: attachmentRefs.default([]),
    clientMessageId: idempotencyKey.optional(),
    replyToMessageId,
    // With sendAt the message is scheduled (202, a scheduled message) instead of sent now; null is no schedule.
    sendAt: z.union([z.null(), sendAt()], { error: rules.SEND_AT_FORMAT }).optional(),
    cancelIfReplied: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .refine((b) => b.content.trim() !== '' || b.attachments.length > 0, { path: ['content'], message: 'is required' })
  // A scheduled message is sent as written, without a quote: refused rather than dropped without a word.
  .refine((b) => !(b.sendAt && b.replyToMessageId), {
    path: ['replyToMessageId'],
    message: 'cannot be combined with sendAt (a scheduled message quotes nothing)',
  });

// The spec's send body names the account zaloAccountId, the rest of the API chatnetAccountId: either is accepted.
export const PublicSend = z
  .object({
    chatnetAccountId: s.requiredText(100).optional(),
    zaloAccountId: s.requiredText(100).optional(),
    threadId: s.requiredText(rules.THREAD_ID_MAX),
    content: content('is required').refine((v) => v.trim() !== '', 'is required'),
    threadType: s.enumOf(rules.THREAD_TYPES).default('user'),
    contentType,
    clientMessageId: idempotencyKey.optional(),
    replyToMessageId,
  })
  .refine((b) => b.chatnetAccountId !== undefined || b.zaloAccountId !== undefined, {
    path: ['chatnetAccountId'],
    message: 'is required (or zaloAccountId, its other name)',
  })
  .refine((b) => b.chatnetAccountId === undefined || b.zaloAccountId === undefined || b.chatnetAccountId === b.zaloAccountId, {
    path: ['zaloAccountId'],
    message: 'differs from chatnetAccountId; both name the same account, send one',
  })
  .transform(({ zaloAccountId, ...b }) => ({ ...b, chatnetAccountId: (b.chatnetAccountId ?? zaloAccountId)! }));

/** PUT /messages/:id/reactions: one emoji (the caller's reaction replaces the one they had). */
export const ReactionBody = z.object({
  emoji: z
    .string({ error: 'is required' })
    .trim()
    .min(1, 'is required')
    .max(rules.REACTION_EMOJI_MAX, rules.REACTION_EMOJI_TOO_LONG)
    .refine((v) => !/\s/.test(v), rules.REACTION_EMOJI_MESSAGE),
});

/** Start a conversation with someone who never wrote: exactly one of contactId, phone and chatnetUid (issue #26). */
export const StartConversation = z
  .object({
    chatnetAccountId: z.string({ error: 'is required (the account to write from)' }).trim().uuid('must be a chat-network account id'),
    contactId: z.string({ error: 'must be a contact id' }).trim().min(1, 'must be a contact id').optional(),
    phone: z
      .string({ error: 'must be a phone number' })
      .trim()
      .max(40, 'must be at most 40 characters')
      .regex(/^\+?[0-9 ().-]+$/, 'must be a phone number (digits, spaces, + - . ( ) only)')
      .optional()
      .describe('any Vietnamese spelling: 0912345678, +84912345678, 84 912 345 678'),
    chatnetUid: s.requiredText(64).optional(),
    content: content('must be a string').default('').describe('a first message; without it (and attachments) the conversation is only opened'),
    contentType,
    attachments: attachmentRefs.default([]),
    clientMessageId: idempotencyKey.optional(),
  })
  .refine((b) => [b.contactId, b.phone, b.chatnetUid].filter((v) => v !== undefined).length === 1, {
    path: ['contactId'],
    message: 'give exactly one of contactId, phone and chatnetUid',
  });

export const Flags = z
  .object({ isRead: z.boolean({ error: 'must be true or false' }).optional(), isReplied: z.boolean({ error: 'must be true or false' }).optional() })
  .refine((b) => b.isRead !== undefined || b.isReplied !== undefined, { path: ['isRead'], message: rules.FLAGS_REQUIRED });

const color = z.string().trim().regex(rules.FOLDER_COLOR_PATTERN, rules.FOLDER_COLOR_MESSAGE);
export const NewFolder = z.object({ name: s.requiredText(rules.FOLDER_NAME_MAX), color: color.optional() });
export const FolderPatch = z.object({ name: s.requiredText(rules.FOLDER_NAME_MAX).optional(), color: color.optional() });
export const FolderConversations = z.object({
  conversationIds: z
    .array(z.string(), { error: 'must be an array of conversation ids' })
    .min(1, rules.FOLDER_CONVERSATIONS_EMPTY)
    .max(rules.FOLDER_CONVERSATIONS_MAX, rules.FOLDER_CONVERSATIONS_TOO_MANY),
});

const PRESET = rules.PRESET_TEXT_MAX;
export const NewPreset = z.object({
  name: s.requiredText(PRESET.name),
  content: s.requiredText(PRESET.content),
  category: s.text(PRESET.category).default(''),
});
export const PresetQuery = z.object({ category: s.text(PRESET.category).optional() });
export const PresetPatch = z.object({
  name: s.requiredText(PRESET.name).optional(),
  content: s.requiredText(PRESET.content).optional(),
  category: s.text(PRESET.category).optional(),
});

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

/** Conversations, messages, sending, folders, presets and attachments: everything messaging owns. */
export function chatRoutes({ clients, config, internalAuth, streamAgent, log, auth }: RouteDeps): ServiceRoutes {
  const internal = Router();
  const messaging = () => clients.messaging;

  /**
   * How many conversations each of the caller's conversation views holds (the first VIEW_COUNTS_MAX by name), each
   * counted by the list itself (limit 1, its pagination.total), in parallel. A view whose saved filters the list no
   * longer takes is left out rather than failing the tab counts.
   */
  const viewCounts = async (ctx: ReturnType<typeof ctxOf>): Promise<Record<string, number>> => {
    const views = await clients.messagingViews.ListViews({ resource: 'conversations', page: 1, limit: VIEW_COUNTS_MAX }, ctx);
    const counted = await Promise.all(
      views.data.map(async (v) => {
        let filters;
        try {
          filters = parseQuery(v.filters, ListQuery);
        } catch (err) {
          if (err instanceof HttpError) return undefined;
          throw err;
        }
        const out = await messaging().ListConversations({ ...filters, page: 1, limit: 1 }, ctx);
        return [v.id, out.pagination?.total ?? 0] as const;
      }),
    );
    return Object.fromEntries(counted.filter((c) => c !== undefined));
  };

  /** POST …/conversations: 201 with a new conversation, 200 with the one that exists; `message` null without content. */
  const startConversation = async (req: Request, res: Response, source: 'ui' | 'public_api') => {
    const b = body(req, StartConversation);
    const out = await messaging().StartConversation(
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
      ctxOf(req, res),
      b.attachments.length ? { deadlineMs: config.GRPC_FILE_SEND_DEADLINE_MS } : undefined,
    );
    res.status(out.created ? 201 : 200).json({
      conversation: conversationOut(answered(out.conversation, 'messaging StartConversation: conversation')),
      message: out.message ? sentOut(out.message) : null,
    });
  };

  internal.get('/conversations/counts', async (req, res) => {
    const ctx = ctxOf(req, res);
    const [counts, views] = await Promise.all([messaging().GetCounts({}, ctx), viewCounts(ctx)]);
    res.json(countsOut(counts, views));
  });
  internal.get('/conversations', async (req, res) => {
    const params = await paramsWithView(() => clients.messagingViews, req, res, 'conversations');
    const out = await messaging().ListConversations({ ...pageParams(req, 50, 100), ...parseQuery(params, ListQuery) }, ctxOf(req, res));
    res.json({ data: out.data.map(conversationOut), pagination: out.pagination });
  });
  internal.get('/messages/search', async (req, res) => {
    const { q, conversationId, chatnetAccountId, from, to } = query(req, SearchQuery);
    const range = dateRange(from, to, 'from', 'to');
    const out = await messaging().SearchMessages({ q, conversationId, chatnetAccountId, ...range, ...pageParams(req, 20, 100) }, ctxOf(req, res));
    res.json({ data: out.data.map(searchHitOut), pagination: out.pagination });
  });
  internal.get('/conversations/:id', async (req, res) => {
    const out = await messaging().GetConversation({ id: req.params.id, ...pageParams(req, 30, 100) }, ctxOf(req, res));
    const conversation = headerOut(answered(out.conversation, 'messaging GetConversation: conversation'));
    res.json({ conversation, messages: out.messages.map(messageOut), pagination: out.pagination, timeline: out.timeline.map(timelineOut) });
  });
  internal.post('/conversations/:id/messages', async (req, res) => {
    const b = body(req, Send);
    if (b.sendAt) {
      const scheduled = await messaging().ScheduleMessage(
        {
          conversationId: req.params.id,
          content: b.content,
          contentType: b.contentType || 'text',
          attachmentIds: b.attachments,
          sendAt: b.sendAt,
          cancelIfReplied: b.cancelIfReplied === true,
        },
        ctxOf(req, res),
      );
      res.status(202).json(scheduledMessageOut(scheduled));
      return;
    }
    const sent = await messaging().SendMessage(
      {
        conversationId: req.params.id,
        content: b.content,
        contentType: b.contentType || 'text',
        clientMessageId: keyOf(req, b.clientMessageId) ?? '',
        source: 'ui',
        attachmentIds: b.attachments,
        replyToMessageId: b.replyToMessageId ?? '',
      },
      ctxOf(req, res),
      b.attachments.length ? { deadlineMs: config.GRPC_FILE_SEND_DEADLINE_MS } : undefined,
    );
    flagReplay(res, sent);
    res.status(201).json(sentOut(sent));
  });
  // Recall and reactions act on one message; each answers it as the caller now sees it.
  internal.post('/messages/:id/recall', async (req, res) => {
    res.json(messageOut(await messaging().RecallMessage({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.put('/messages/:id/reactions', async (req, res) => {
    const b = body(req, ReactionBody);
    res.json(messageOut(await messaging().ReactToMessage({ id: req.params.id, emoji: b.emoji }, ctxOf(req, res))));
  });
  internal.delete('/messages/:id/reactions', async (req, res) => {
    res.json(messageOut(await messaging().RemoveReaction({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.post('/conversations', async (req, res) => {
    await startConversation(req, res, 'ui');
  });
  internal.put('/conversations/:id/messages/:messageId', async (req, res) => {
    const m = await messaging().UpdateMessageFlags(
      { conversationId: req.params.id, messageId: req.params.messageId, ...body(req, Flags) },
      ctxOf(req, res),
    );
    res.json(messageOut(m));
  });
  internal.put('/conversations/:id/assignee', async (req, res) => {
    const b = body(req, Assign);
    const out = await messaging().AssignConversation(
      { id: req.params.id, userId: b.userId ?? undefined, teamId: b.teamId ?? undefined, teamIdSet: b.teamId !== undefined },
      ctxOf(req, res),
    );
    res.json(conversationOut(out));
  });
  internal.put('/conversations/:id/status', async (req, res) => {
    const b = body(req, SetStatus);
    res.json(
      conversationOut(
        await messaging().SetConversationStatus({ id: req.params.id, status: b.status, snoozedUntil: b.snoozedUntil }, ctxOf(req, res)),
      ),
    );
  });
  internal.put('/conversations/:id/priority', async (req, res) => {
    const b = body(req, SetPriority);
    res.json(conversationOut(await messaging().SetConversationPriority({ id: req.params.id, priority: b.priority ?? '' }, ctxOf(req, res))));
  });
  internal.post('/conversations/bulk', async (req, res) => {
    const b = body(req, BulkConversations);
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
    const out = await messaging().BulkUpdateConversations({ ids: b.ids, action: b.action, ...params }, ctxOf(req, res));
    res.json({ updated: out.updated, failed: out.failed ?? [] });
  });
  const moves = [
    ['archive', 'ArchiveConversation'],
    ['close', 'CloseConversation'],
    ['reopen', 'ReopenConversation'],
    ['read', 'MarkConversationRead'],
    ['unread', 'MarkConversationUnread'],
  ] as const;
  for (const [path, method] of moves) {
    internal.post(`/conversations/:id/${path}`, async (req, res) => {
      res.json(moveOut(await messaging()[method]({ id: req.params.id }, ctxOf(req, res))));
    });
  }

  // Inbox visibility (messaging applies it to every conversation query): anyone reads it, admins and owners set it.
  internal.get('/settings/inbox', async (req, res) => {
    res.json(inboxSettingsOut(await messaging().GetInboxSettings({}, ctxOf(req, res))));
  });
  internal.put('/settings/inbox', async (req, res) => {
    res.json(inboxSettingsOut(await messaging().UpdateInboxSettings(inboxSettingsIn(body(req, InboxSettings)), ctxOf(req, res))));
  });

  internal.get('/chat/folders', async (req, res) => {
    res.json((await messaging().ListFolders({}, ctxOf(req, res))).data.map(folderOut));
  });
  internal.post('/chat/folders', async (req, res) => {
    res.status(201).json(folderOut(await messaging().CreateFolder(body(req, NewFolder), ctxOf(req, res))));
  });
  internal.put('/chat/folders/:id', async (req, res) => {
    res.json(folderOut(await messaging().UpdateFolder({ id: req.params.id, ...body(req, FolderPatch) }, ctxOf(req, res))));
  });
  internal.delete('/chat/folders/:id', async (req, res) => {
    await messaging().DeleteFolder({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });
  internal.post('/chat/folders/:id/conversations', async (req, res) => {
    res.json(folderOut(await messaging().AddConversationsToFolder({ folderId: req.params.id, ...body(req, FolderConversations) }, ctxOf(req, res))));
  });
  internal.delete('/chat/folders/:id/conversations/:conversationId', async (req, res) => {
    await messaging().RemoveConversationFromFolder({ folderId: req.params.id, conversationId: req.params.conversationId }, ctxOf(req, res));
    res.status(204).end();
  });

  internal.get('/chat/presets', async (req, res) => {
    const { category } = query(req, PresetQuery);
    res.json((await messaging().ListPresets({ category }, ctxOf(req, res))).data.map(presetOut));
  });
  internal.post('/chat/presets', async (req, res) => {
    res.status(201).json(presetOut(await messaging().CreatePreset(body(req, NewPreset), ctxOf(req, res))));
  });
  internal.get('/chat/presets/:id', async (req, res) => {
    res.json(presetOut(await messaging().GetPreset({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.put('/chat/presets/:id', async (req, res) => {
    res.json(presetOut(await messaging().UpdatePreset({ id: req.params.id, ...body(req, PresetPatch) }, ctxOf(req, res))));
  });
  internal.delete('/chat/presets/:id', async (req, res) => {
    await messaging().DeletePreset({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });

  // Bytes stream (below); deleting an unsent upload is an ordinary call.
  internal.delete('/chat/attachments/:id', async (req, res) => {
    const attachmentId = id().safeParse(req.params.id);
    if (!attachmentId.success) throw badRequest([{ field: 'id', message: 'must be an attachment id' }]);
    await messaging().DeleteAttachment({ id: attachmentId.data }, ctxOf(req, res));
    res.status(204).end();
  });

  const pub = Router();
  pub.post('/conversations', requireScope('messages:send'), async (req, res) => {
    await startConversation(req, res, 'public_api');
  });
  pub.get('/conversations', requireScope('conversations:read'), async (req, res) => {
    const { limit, keyset } = publicPage(req, CURSOR_LISTS.conversations, 20, 100);
    const out = await messaging().ListPublicConversations({ limit, keyset }, ctxOf(req, res));
    res.json({ conversations: out.conversations.map(publicConversationOut), nextCursor: nextCursor(CURSOR_LISTS.conversations, keyset, out.next) });
  });
  pub.get('/conversations/:id/messages', requireScope('conversations:read'), async (req, res) => {
    const { limit, keyset } = publicPage(req, CURSOR_LISTS.messages, 50, 200);
    const out = await messaging().ListPublicMessages({ conversationId: pathParam(req, 'id'), limit, keyset }, ctxOf(req, res));
    res.json({ messages: out.messages.map(publicMessageOut), nextCursor: nextCursor(CURSOR_LISTS.messages, keyset, out.next) });
  });
  pub.get('/messages/:id', requireScope('conversations:read'), async (req, res) => {
    // A malformed id is the caller's mistake (400); a well-formed unknown or another org's one is 404 from messaging.
    const messageId = id().safeParse(req.params.id);
    if (!messageId.success) throw badRequest([{ field: 'id', message: 'must be a message id' }]);
    res.json(publicMessageOut(await messaging().GetPublicMessage({ id: messageId.data }, ctxOf(req, res))));
  });
  pub.post('/messages/send', requireScope('messages:send'), async (req, res) => {
    const b = body(req, PublicSend);
    const sent = await messaging().SendToThread(
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
      ctxOf(req, res),
    );
    // The stored message's id and delivery status (sent; seen later): GET /api/public/messages/:id reads it back.
    flagReplay(res, sent);
    res.json({ success: true, messageId: sent.id, status: sent.status });
  });

  // Attachment bytes stream through: authenticated here (bearer, with its rate limit), then proxied to
  // messaging's HTTP endpoint with the caller signed for messaging. Mounted before any body parser.
  const files = streamProxy({
    target: config.MESSAGING_HTTP_URL,
    // Named like messaging's HTTP_OPERATIONS: an upload's credential is worthless for a download and the reverse.
    operationOf: (req) => (req.method === 'POST' ? 'messaging.v1.Http/UploadAttachment' : 'messaging.v1.Http/DownloadAttachment'),
    pathOf: (req) => (typeof req.params.id === 'string' ? `/v1/attachments/${encodeURIComponent(req.params.id)}` : '/v1/attachments'),
    auth: internalAuth,
    agent: streamAgent,
    log,
    serviceName: 'messaging',
  });
  const stream = Router();
  stream.post('/chat/attachments', auth.bearer, files);
  stream.get('/chat/attachments/:id', auth.bearer, files);

  return { internal, public: pub, stream };
}
