import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  AppError,
  CallContext,
  createServiceClient,
  decodeRemoteError,
  GrpcTransport,
  InternalAuth,
  type LbPolicy,
  type ClientFor,
  loadProto,
  notFound,
  protoRoot,
  serviceDefinition,
  status,
  traceFields,
} from '@crm/grpc-kit';
import type { messaging } from '@crm/proto-types';
import type { Logger } from '@crm/logger';
import { isUuid } from '@crm/validation';
import type { ChatConversation, ChatMessage } from '../local/conversation';

/** messaging's largest page; more pages are walked only to find an older message. */
const PAGE = 100;
const MAX_PAGES = 50;

type RemoteMessage = messaging.Message__Output;
type RemoteDetail = messaging.ConversationDetail__Output;

function toMessage(m: RemoteMessage): ChatMessage {
  return {
    id: m.id,
    content: m.content ?? '',
    contentType: m.contentType ?? 'text',
    fromCustomer: !!m.isFromChatnet,
    senderName: m.senderName ?? '',
    sentAt: m.sentAt ?? '',
  };
}

const chronological = (a: ChatMessage, b: ChatMessage) => (a.sentAt < b.sentAt ? -1 : a.sentAt > b.sentAt ? 1 : 0);

/**
 * Conversations come from messaging over gRPC (`GetConversation`), with the caller's context so
 * messaging applies the same organization boundary. The client is created on first use: messaging's
 * contract is loaded only when a feature needs it, and an unreachable messaging is a clear 503.
 */
export class MessagingGateway {
  private client?: ClientFor<'messaging.v1.MessagingService'>;

  constructor(
    private readonly address: string,
    private readonly auth: InternalAuth,
    private readonly deadlineMs: number,
    private readonly log: Logger,
    private readonly lbPolicy: LbPolicy = 'pick_first',
    private readonly transport: GrpcTransport = GrpcTransport.plaintext,
  ) {}

  private get(): ClientFor<'messaging.v1.MessagingService'> {
    if (!this.client) {
      if (!existsSync(path.join(protoRoot(), 'messaging/v1/messaging.proto'))) {
        throw new AppError('unavailable', 'Conversations are unavailable: the messaging service is not deployed');
      }
      const ctor = serviceDefinition(loadProto('messaging/v1/messaging.proto'), 'messaging.v1.MessagingService');
      this.client = createServiceClient(ctor, this.address, this.auth, this.deadlineMs, this.lbPolicy, this.transport);
    }
    return this.client;
  }

  private async page(ctx: CallContext, id: string, page: number, limit: number): Promise<RemoteDetail> {
    try {
      return await this.get().GetConversation({ id, page, limit }, ctx);
    } catch (err) {
      if (err instanceof AppError) throw err;
      const e = decodeRemoteError(err as { code?: number; details?: string });
      if (e.grpcCode === status.NOT_FOUND || e.grpcCode === status.INVALID_ARGUMENT) throw notFound('Conversation');
      if (e.grpcCode === status.PERMISSION_DENIED) throw new AppError('permission_denied', e.message);
      this.log.warn({ code: e.code, grpcCode: e.grpcCode, requestId: ctx.requestId, ...traceFields(ctx) }, 'messaging GetConversation failed');
      throw new AppError('unavailable', 'Conversations are unavailable right now (the messaging service did not answer); try again shortly');
    }
  }

  /**
   * The conversation with its most recent `recent` messages, oldest first. When `messageId` is given,
   * that message must belong to the conversation (404 otherwise) and the context ends with it.
   */
  async load(
    ctx: CallContext,
    conversationId: string,
    recent: number,
    messageId?: string,
  ): Promise<{ conversation: ChatConversation; target?: ChatMessage }> {
    if (!isUuid(conversationId)) throw notFound('Conversation');
    if (messageId !== undefined && !isUuid(messageId)) throw notFound('Message');
    const first = await this.page(ctx, conversationId, 1, PAGE);
    const total = first.pagination?.total ?? first.messages?.length ?? 0;
    // messaging may clamp the page size; walk pages of the size it actually used.
    const per = first.pagination?.limit || PAGE;
    const pages = Math.max(1, Math.ceil(total / per));
    const firstBatch = (first.messages ?? []).map(toMessage);
    // messaging may list newest or oldest first; with several pages, the newest are on the last page
    // when the first page starts with the oldest message.
    const oldestFirst = firstBatch.length > 1 && chronological(firstBatch[0], firstBatch[firstBatch.length - 1]) < 0;
    const order = oldestFirst ? Array.from({ length: pages }, (_, i) => pages - i) : Array.from({ length: pages }, (_, i) => i + 1);

    const seen: ChatMessage[] = [];
    let target: ChatMessage | undefined;
    for (let i = 0; i < Math.min(order.length, MAX_PAGES); i++) {
      const batch = order[i] === 1 ? firstBatch : ((await this.page(ctx, conversationId, order[i], per)).messages ?? []).map(toMessage);
      seen.push(...batch);
      if (messageId === undefined) {
        if (seen.length >= recent) break;
        continue;
      }
      target = seen.find((m) => m.id === messageId);
      if (target) break;
    }
    if (messageId !== undefined && !target) throw notFound('Message');

    let messages = [...new Map(seen.map((m) => [m.id, m])).values()].sort(chronological);
    if (target) messages = messages.filter((m) => chronological(m, target!) <= 0);
    messages = messages.slice(-recent);
    return {
      conversation: { id: conversationId, contactName: first.conversation?.contactName ?? '', messages, totalMessages: total },
      target,
    };
  }

  close(): void {
    this.client?.close();
  }
}
