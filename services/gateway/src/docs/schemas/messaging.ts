import { z } from 'zod';
import { nulls, proto } from '../proto-schema';
import { Pagination } from './common';

const MSG = 'messaging/v1/messaging.proto';

/** Public conversation (chat.routes publicConversationOut): unset values as null. */
export const PublicConversation = nulls(proto(MSG, 'messaging.v1.PublicConversation'), ['lastMessageAt', 'assigneeId']).extend({
  contact: nulls(proto(MSG, 'messaging.v1.PublicContact'), ['phone', 'avatarUrl']).nullable(),
});
export const PublicMessage = proto(MSG, 'messaging.v1.PublicMessage');
/** POST /api/public/messages/send. */
export const PublicSent = z.object({
  success: z.literal(true),
  messageId: z.string().describe('the stored message; read it with GET /api/public/messages/{id}'),
  status: z.string().describe('delivery status as stored: sent'),
});

// ------------------------------------------------------------------------------------------- internal API
// chat.routes maps messaging's answers with untyped helpers (`...c` plus explicit nulls), so these are the proto
// messages with the same fields spelled out as null; tests/gateway/openapi-contract.test.ts checks them live.

/** chat.routes conversationOut: an inbox row. */
export const Conversation = nulls(proto(MSG, 'messaging.v1.Conversation'), ['contactId', 'contactAvatar', 'assigneeId', 'teamId', 'snoozedUntil']);
/** chat.routes headerOut: the conversation above its messages. */
export const ConversationHeader = nulls(proto(MSG, 'messaging.v1.ConversationHeader'), ['contactId', 'contactAvatar', 'assigneeId', 'teamId', 'snoozedUntil']);
/** chat.routes messageOut. */
export const Message = nulls(proto(MSG, 'messaging.v1.Message'), ['sentByUserId', 'seenAt', 'senderContactId']);
export const Note = proto(MSG, 'messaging.v1.Note');

/** chat.routes timelineOut: a message or a private note, told apart by `kind`. */
export const TimelineItem = z.union([
  Message.extend({ kind: z.literal('message') }),
  Note.extend({ kind: z.literal('note'), private: z.literal(true).describe('notes are never sent to the chat network') }),
]);

/** GET /conversations/:id: header, one page of messages, and the same page with the notes of its time range. */
export const ConversationDetail = z.object({
  conversation: ConversationHeader,
  messages: z.array(Message).describe('newest first'),
  pagination: Pagination,
  timeline: z.array(TimelineItem).describe('the page’s messages and the private notes of its time range, newest first'),
});

/** chat.routes moveOut: archive, close, reopen, read, unread. */
export const ConversationMove = z.object({ message: z.string(), conversation: Conversation });

/** chat.routes sentOut: the stored message; `replayed` becomes the Idempotent-Replayed header. */
export const SentMessage = proto(MSG, 'messaging.v1.SentMessage').omit({ replayed: true });

/** What POST /chat/attachments answers (messaging's HTTP endpoint, streamed through untouched). */
export const Attachment = proto(MSG, 'messaging.v1.Attachment');
