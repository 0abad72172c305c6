import { randomUUID } from 'node:crypto';
import { AppError, GrpcServer, loadProto, serviceDefinition } from '@crm/grpc-kit';
import { createLogger } from '@crm/logger';
import { testAuth } from '@crm/testing';
import { withUnfaked } from './fake-grpc';

export interface FakeConversation {
  orgId: string;
  contactId: string | null;
  assigneeId: string | null;
  /** Agents messaging's inbox visibility hides it from (GetConversation answers them NOT_FOUND). */
  hiddenFrom: string[];
}

/**
 * messaging as crm and automation ask it about one conversation (GetConversation): the conversations the test puts
 * in, each of one org. Checks each caller's credential and call policy like the real service.
 */
export async function fakeConversations() {
  const conversations = new Map<string, FakeConversation>();
  const ctor = serviceDefinition(loadProto('messaging/v1/messaging.proto'), 'messaging.v1.MessagingService');
  const server = new GrpcServer(createLogger('fake-messaging', 'silent'), testAuth('messaging')).add(
    ctor,
    withUnfaked(ctor, {
      GetConversation: async (req, ctx) => {
        const c = conversations.get(req.id);
        if (!c || c.orgId !== ctx.orgId || (ctx.role === 'agent' && c.hiddenFrom.includes(ctx.userId)))
          throw new AppError('not_found', 'Conversation not found');
        const now = new Date().toISOString();
        return {
          conversation: {
            id: req.id,
            contactId: c.contactId ?? undefined,
            assigneeId: c.assigneeId ?? undefined,
            contactName: '',
            contactAvatar: '',
            type: 'user',
            chatnetAccountId: randomUUID(),
            threadId: 't',
            status: 'active',
            createdAt: now,
            lastActivityAt: now,
            messageCount: 0,
            unreadCount: 0,
            folderIds: [],
          },
          messages: [],
          pagination: { total: 0, page: 1, limit: 1, pages: 0 },
          timeline: [],
        };
      },
    }),
  );
  const port = await server.listen('127.0.0.1', 0);
  return {
    addr: `127.0.0.1:${port}`,
    /** Puts a conversation in and returns its id. */
    add(orgId: string, c: Partial<Omit<FakeConversation, 'orgId'>> = {}): string {
      const id = randomUUID();
      conversations.set(id, { orgId, contactId: c.contactId ?? null, assigneeId: c.assigneeId ?? null, hiddenFrom: c.hiddenFrom ?? [] });
      return id;
    },
    stop: () => server.stop(100),
  };
}
