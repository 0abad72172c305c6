import { randomUUID } from 'node:crypto';
import { createLogger } from '@crm/logger';
import { testAuth } from '@crm/testing';
import { AppError, GrpcServer, loadProto, notFound, serviceDefinition } from '@crm/grpc-kit';
import { withUnfaked } from '../../support/fake-grpc';

/**
 * A stand-in for messaging that speaks its real contract (proto/messaging/v1/messaging.proto) but
 * implements only what the AI service calls: GetConversation, newest message first, per organization
 * (another org's conversation is NOT_FOUND, as in messaging). Every other method answers
 * FAILED_PRECONDITION so an unexpected call shows up in a test.
 */
export interface FakeMessage {
  content: string;
  fromCustomer: boolean;
  senderName?: string;
  contentType?: string;
}

export interface FakeMessaging {
  address: string;
  /** Store a conversation for an organization; returns its id and its messages' ids, oldest first. */
  addConversation(orgId: string, c: { contactName: string; messages: FakeMessage[] }): { id: string; messageIds: string[] };
  calls: { method: string; orgId: string; id: string }[];
  stop(): Promise<void>;
}

interface Stored {
  orgId: string;
  header: Record<string, unknown>;
  messages: Record<string, unknown>[];
}

export async function startFakeMessaging(): Promise<FakeMessaging> {
  const ctor = serviceDefinition(loadProto('messaging/v1/messaging.proto'), 'messaging.v1.MessagingService');
  const conversations = new Map<string, Stored>();
  const calls: FakeMessaging['calls'] = [];
  const handlers = withUnfaked(
    ctor,
    {},
    (method) => new AppError('failed_precondition', `${method} is not implemented by the fake messaging service`),
  );
  handlers.GetConversation = async (req, ctx) => {
    calls.push({ method: 'GetConversation', orgId: ctx.orgId, id: req.id });
    const c = conversations.get(req.id);
    if (!c || c.orgId !== ctx.orgId) throw notFound('Conversation');
    const page = Math.max(1, req.page || 1);
    const limit = Math.min(100, Math.max(1, req.limit || 30));
    const newestFirst = [...c.messages].reverse();
    const total = newestFirst.length;
    return {
      conversation: c.header,
      messages: newestFirst.slice((page - 1) * limit, page * limit),
      pagination: { total, page, limit, pages: Math.ceil(total / limit) },
    };
  };
  const server = new GrpcServer(createLogger('fake-messaging', 'silent'), testAuth('messaging'));
  server.add(ctor, handlers);
  const port = await server.listen('127.0.0.1', 0);

  let clock = Date.parse('2025-03-01T09:00:00.000Z');
  return {
    address: `127.0.0.1:${port}`,
    calls,
    addConversation(orgId, { contactName, messages }) {
      const id = randomUUID();
      const stored: Stored = {
        orgId,
        header: {
          id,
          contactId: randomUUID(),
          contactName,
          contactAvatar: '',
          type: 'user',
          chatnetAccountId: randomUUID(),
          threadId: 't1',
          status: 'active',
          createdAt: new Date(clock).toISOString(),
          lastActivityAt: new Date(clock).toISOString(),
          messageCount: messages.length,
          unreadCount: 0,
          folderIds: [],
        },
        messages: messages.map((m) => {
          clock += 60_000;
          return {
            id: randomUUID(),
            conversationId: id,
            content: m.content,
            contentType: m.contentType ?? 'text',
            senderUid: m.fromCustomer ? 'uid-customer' : 'uid-business',
            senderName: m.senderName ?? (m.fromCustomer ? contactName : 'Agent'),
            isFromChatnet: m.fromCustomer,
            isRead: true,
            isReplied: false,
            sentAt: new Date(clock).toISOString(),
            status: m.fromCustomer ? 'received' : 'sent',
            source: m.fromCustomer ? '' : 'ui',
            attachments: [],
          };
        }),
      };
      conversations.set(id, stored);
      return { id, messageIds: stored.messages.map((m) => m.id as string) };
    },
    stop: () => server.stop(500),
  };
}
