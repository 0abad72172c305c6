import {
  AppError,
  CallContext,
  type ClientFor,
  createServiceClient,
  decodeRemoteError,
  type GrpcTransport,
  InternalAuth,
  type LbPolicy,
  loadProto,
  serviceDefinition,
  status,
  traceFields,
} from '@crm/grpc-kit';
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

/** A conversation as a task refers to it. */
export interface ConversationRef {
  id: string;
  contactId: string | null;
  assigneeId: string | null;
}

export interface ConversationSource {
  forContact(ctx: CallContext, contactId: string): Promise<ContactConversations>;
  /**
   * The org's conversation as the caller may see it (messaging applies their inbox visibility), or undefined when
   * it is not the org's or hidden from them. Unlike forContact this must be answered: unavailable (503) otherwise.
   */
  visibleConversation(ctx: CallContext, id: string): Promise<ConversationRef | undefined>;
  close(): void;
}

/**
 * The contact detail's conversations come from messaging. A detail page must not wait on, or fail because
 * of, another service: a short deadline, and on any failure an empty list and a warning.
 */
export function messagingConversations(
  addr: string,
  auth: InternalAuth,
  deadlineMs: number,
  log: Logger,
  lbPolicy: LbPolicy,
  transport: GrpcTransport,
): ConversationSource {
  let client: ClientFor<'messaging.v1.MessagingService'> | undefined;
  const get = () =>
    // Loaded on first use: a deployment without messaging (or a checkout without its proto) still starts.
    (client ??= createServiceClient(
      serviceDefinition(loadProto('messaging/v1/messaging.proto'), 'messaging.v1.MessagingService'),
      addr,
      auth,
      deadlineMs,
      lbPolicy,
      transport,
    ));
  return {
    async forContact(ctx, contactId) {
      try {
        const res = await get().ContactConversations(
          { contactId },
          { orgId: ctx.orgId, userId: ctx.userId, role: ctx.role, requestId: ctx.requestId, origin: ctx.origin, traceparent: ctx.traceparent },
          { deadlineMs },
        );
        return { available: true, conversations: res.conversations ?? [] };
      } catch (err) {
        log.warn(
          {
            requestId: ctx.requestId,
            contactId,
            addr,
            err: { message: (err as Error).message, code: (err as { code?: number }).code },
            ...traceFields(ctx),
          },
          'messaging unavailable: contact conversations omitted',
        );
        return { available: false, conversations: [] };
      }
    },
    async visibleConversation(ctx, id) {
      try {
        const res = await get().GetConversation(
          { id, page: 1, limit: 1 },
          { orgId: ctx.orgId, userId: ctx.userId, role: ctx.role, requestId: ctx.requestId, origin: ctx.origin, traceparent: ctx.traceparent },
          { deadlineMs },
        );
        const c = res.conversation;
        return c ? { id: c.id, contactId: c.contactId || null, assigneeId: c.assigneeId || null } : undefined;
      } catch (err) {
        const e = decodeRemoteError(err as { code?: number });
        if (e.grpcCode === status.NOT_FOUND || e.grpcCode === status.INVALID_ARGUMENT) return undefined;
        log.warn(
          { requestId: ctx.requestId, conversationId: id, err: { message: (err as Error).message, code: e.grpcCode }, ...traceFields(ctx) },
          'messaging did not answer a conversation check',
        );
        throw new AppError('unavailable', 'Cannot check conversationId now: the messaging service is unavailable');
      }
    },
    close: () => client?.close(),
  };
}
