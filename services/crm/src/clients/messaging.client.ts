import { CallContext, type ClientFor, createServiceClient, InternalAuth, type LbPolicy, loadProto, serviceDefinition } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';

export interface ConversationSummary {
  id: string;
  chatnetAccountId: string;
  messageCount: number;
  lastMessageAt?: string;
}

export interface ContactConversations {
  /** false when messaging could not be asked; `conversations` is then empty. */
  available: boolean;
  conversations: ConversationSummary[];
}

export interface ConversationSource {
  forContact(ctx: CallContext, contactId: string): Promise<ContactConversations>;
  close(): void;
}

/**
 * The contact detail's conversations come from messaging. A detail page must not wait on, or fail because
 * of, another service: a short deadline, and on any failure an empty list and a warning.
 */
export function messagingConversations(addr: string, auth: InternalAuth, deadlineMs: number, log: Logger, lbPolicy: LbPolicy): ConversationSource {
  let client: ClientFor<'messaging.v1.MessagingService'> | undefined;
  const get = () =>
    // Loaded on first use: a deployment without messaging (or a checkout without its proto) still starts.
    (client ??= createServiceClient(serviceDefinition(loadProto('messaging/v1/messaging.proto'), 'messaging.v1.MessagingService'), addr, auth, deadlineMs, lbPolicy));
  return {
    async forContact(ctx, contactId) {
      try {
        const res = await get().ContactConversations(
          { contactId },
          { orgId: ctx.orgId, userId: ctx.userId, role: ctx.role, requestId: ctx.requestId },
          { deadlineMs },
        );
        return { available: true, conversations: res.conversations ?? [] };
      } catch (err) {
        log.warn(
          { requestId: ctx.requestId, contactId, addr, err: { message: (err as Error).message, code: (err as { code?: number }).code } },
          'messaging unavailable: contact conversations omitted',
        );
        return { available: false, conversations: [] };
      }
    },
    close: () => client?.close(),
  };
}
