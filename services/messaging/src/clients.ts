import {
  AppError,
  CallContext,
  type ClientFor,
  type ErrorKind,
  createServiceClient,
  decodeRemoteError,
  type GrantKeeper,
  type GrpcTransport,
  InternalAuth,
  loadProto,
  type ServiceName,
  serviceDefinition,
  status,
  traceFields,
} from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import type { ai, connector, crm, identity } from '@crm/proto-types';
import type { MessagingConfig } from './config';

/** crm's contact for a chat-network uid (created: it did not exist before). */
export type ContactRef = crm.UpsertChatnetContactResult__Output;

/** A file of a message being sent, as the connector needs it to fetch the bytes from our attachments HTTP port. */
export interface OutboundAttachment {
  id: string;
  fileName: string;
  mimeType: string;
  size: number;
  sha256: string;
}

export type ChatnetSendResult = connector.SendChatMessageResult__Output;
/** A message a send quotes, as the network needs it named. */
export type ChatnetQuote = connector.QuotedMessage;
/** A message of a thread named by its ids, for a recall or a reaction. */
export interface ChatnetMessageRef {
  accountId: string;
  threadId: string;
  threadType: string;
  chatnetMessageId: string;
  cliMsgId: string;
}

/**
 * Ctx forwarded to other services: the same org, user and request id the gateway gave us, and the trace the call
 * continues (`traceparent`: a handler's ctx, a consumed event's eventTraceparent; none for a timer's work), passed
 * explicitly since the service runs without an active context unless spans are exported (main.ts).
 */
type Forward = Partial<CallContext>;

/**
 * The services messaging calls. Clients are made on first use, so this service starts (and serves its
 * inbox) even where crm or the connector is not deployed; such calls then fail as `unavailable`.
 */
export class RemoteClients {
  private readonly made: Array<{ close(): void }> = [];
  private readonly userNames = new Map<string, { name: string; until: number }>();
  private readonly userActivity = new Map<string, { active: boolean; until: number }>();

  constructor(
    private readonly config: MessagingConfig,
    private readonly log: Logger,
    private readonly auth: InternalAuth,
    private readonly transport: GrpcTransport,
    /** The org's grant: the origin of a call messaging makes on its own, with no request or event to vouch (#27). */
    private readonly grants?: Pick<GrantKeeper, 'vouching'>,
  ) {}

  /**
   * identity's and the connector's calls go out vouched (GrantKeeper.vouching): with the request's or event's origin
   * they carry, else the org's grant (a scheduled message, an auto-reply, the assignment repair, a read receipt:
   * messaging acting on its own). crm's and ai's calls are made for a request or an inbound message only, with its stamp.
   */
  private readonly identity = this.lazy('identity', 'identity/v1/identity.proto', 'identity.v1.IdentityService', () => this.config.IDENTITY_ADDR, {
    vouched: true,
  });
  private readonly crm = this.lazy('crm', 'crm/v1/crm.proto', 'crm.v1.CrmService', () => this.config.CRM_ADDR);
  private readonly connector = this.lazy(
    'connector',
    'connector/v1/connector.proto',
    'connector.v1.ConnectorService',
    () => this.config.CONNECTOR_ADDR,
    { vouched: true },
  );

  private readonly ai = this.lazy('ai', 'ai/v1/ai.proto', 'ai.v1.AiService', () => this.config.AI_ADDR);

  /** The guarded auto-reply's decision for a customer's message (issue #32); throws the raw gRPC error. */
  autoReply(ctx: Forward, req: ai.AutoReplyRequest): Promise<ai.AutoReplyResult__Output> {
    return this.ai().AutoReply(req, ctx, { deadlineMs: this.config.AI_AUTO_REPLY_DEADLINE_MS });
  }

  /** A getter making `service`'s typed client on first use. */
  private lazy<N extends ServiceName>(
    name: string,
    proto: string,
    service: N,
    address: () => string,
    opts: { vouched?: boolean } = {},
  ): () => ClientFor<N> {
    let client: ClientFor<N> | undefined;
    return () => {
      if (client) return client;
      try {
        client = createServiceClient(
          serviceDefinition(loadProto(proto), service),
          address(),
          this.auth,
          undefined,
          this.config.GRPC_LB_POLICY,
          this.transport,
        );
      } catch (err) {
        this.log.warn({ err, service: name }, 'cannot load the contract of a service this one calls');
        throw new AppError('unavailable', `The ${name} service is not available`);
      }
      this.made.push(client);
      if (opts.vouched && this.grants) client = this.grants.vouching(client);
      return client;
    };
  }

  /** Find or create the org's contact for a chat-network uid (crm). Throws the raw gRPC error. */
  upsertChatnetContact(
    ctx: Forward,
    req: { chatnetUid: string; displayName: string; avatar: string; chatnetAccountId: string; threadType: string },
  ): Promise<ContactRef> {
    return this.crm().UpsertChatnetContact(req, ctx, { deadlineMs: this.config.CRM_DEADLINE_MS });
  }

  /** UpsertChatnetContact for several threads of one org in one call (crm's one transaction), answered in order. */
  upsertChatnetContacts(
    ctx: Forward,
    contacts: Array<{ chatnetUid: string; displayName: string; avatar: string; chatnetAccountId: string; threadType: string }>,
  ): Promise<ContactRef[]> {
    return this.crm()
      .UpsertChatnetContacts({ contacts }, ctx, { deadlineMs: this.config.CRM_DEADLINE_MS })
      .then((r) => r.contacts);
  }

  /** The phone of a contact (for the public conversation shape); undefined when crm cannot say. */
  async contactPhone(ctx: Forward, id: string): Promise<string | undefined> {
    try {
      const c = await this.crm().GetContactBrief({ id }, ctx, { deadlineMs: this.config.CRM_DEADLINE_MS });
      return c.phone;
    } catch (err) {
      this.log.warn({ err, contactId: id, ...traceFields(ctx) }, 'crm GetContactBrief failed; phone stays empty until contact.updated');
      return undefined;
    }
  }

  /** Send through the account's live session; connector errors become this service's errors. */
  async sendChatMessage(
    ctx: Forward,
    req: {
      accountId: string;
      threadId: string;
      threadType: string;
      content: string;
      contentType: string;
      clientMessageId: string;
      attachments: OutboundAttachment[];
      quote?: ChatnetQuote;
    },
  ): Promise<ChatnetSendResult> {
    const deadlineMs = req.attachments.length ? this.config.CONNECTOR_FILE_DEADLINE_MS : this.config.CONNECTOR_DEADLINE_MS;
    try {
      return await this.connector().SendChatMessage(req, ctx, { deadlineMs });
    } catch (err) {
      throw connectorError(err);
    }
  }

  /** Tell the network the account read messages of one thread (at most 50); throws the raw gRPC error. */
  async markThreadSeen(
    ctx: Forward,
    req: {
      accountId: string;
      threadId: string;
      threadType: string;
      messages: Array<{ chatnetMessageId: string; cliMsgId: string; fromUid: string; contentType: string; sentAt: string }>;
    },
  ): Promise<void> {
    await this.connector().MarkThreadSeen(req, ctx, { deadlineMs: this.config.CONNECTOR_DEADLINE_MS });
  }

  /** Recall a message the account sent (zca `undo`); connector errors become this service's errors. */
  async recallChatMessage(ctx: Forward, req: ChatnetMessageRef): Promise<void> {
    try {
      await this.connector().RecallChatMessage(req, ctx, { deadlineMs: this.config.CONNECTOR_DEADLINE_MS });
    } catch (err) {
      throw connectorError(err);
    }
  }

  /** Set (or with an empty emoji take back) the account's reaction on a message; connector errors become ours. */
  async reactToChatMessage(ctx: Forward, req: ChatnetMessageRef & { emoji: string }): Promise<void> {
    try {
      await this.connector().ReactToChatMessage(req, ctx, { deadlineMs: this.config.CONNECTOR_DEADLINE_MS });
    } catch (err) {
      throw connectorError(err);
    }
  }

  /** A user's full name for the sender of outbound messages; '' when identity cannot say. */
  async userName(ctx: Forward, userId: string): Promise<string> {
    const key = `${ctx.orgId}:${userId}`;
    const hit = this.userNames.get(key);
    if (hit && hit.until > Date.now()) return hit.name;
    try {
      const u = await this.identity().GetUser({ id: userId }, ctx, { deadlineMs: 2_000 });
      if (this.userNames.size > 10_000) this.userNames.clear();
      this.userNames.set(key, { name: u.fullName, until: Date.now() + 5 * 60_000 });
      return u.fullName;
    } catch (err) {
      this.log.warn({ err, userId, ...traceFields(ctx) }, 'identity GetUser failed; sending without a sender name');
      return '';
    }
  }

  /**
   * A user of the caller's organization by id (identity GetUser; `status` active or inactive), undefined when the
   * org has no such user. Identity unreachable is `unavailable`: an assignment or a mention must not be decided, or
   * silently dropped, because of an outage.
   */
  async orgUser(ctx: Forward, id: string): Promise<OrgUser | undefined> {
    return this.unlessNotFound(ctx, () => this.identity().GetUser({ id }, ctx, { deadlineMs: 2_000 }));
  }

  /** A team of the caller's org; undefined when identity knows no such team in that org. */
  async orgTeam(ctx: Forward, id: string): Promise<{ id: string } | undefined> {
    return this.unlessNotFound(ctx, () => this.identity().GetTeam({ id }, ctx, { deadlineMs: 2_000 }));
  }

  /**
   * The active user of the caller's organization with exactly this email, if any (identity ListUsers: its search
   * matches email substrings, so the exact address is picked from the matches; emails are unique system-wide).
   */
  async orgUserByEmail(ctx: Forward, email: string): Promise<OrgUser | undefined> {
    try {
      const page = await this.identity().ListUsers({ page: 1, limit: 100, status: 'active', search: email }, ctx, {
        deadlineMs: 2_000,
      });
      return page.data.find((u) => u.email.toLowerCase() === email.toLowerCase());
    } catch (err) {
      throw identityUnavailable(err, this.log, ctx);
    }
  }

  /**
   * Whether a user of the org is active, for the auto-assignment rotation: remembered for USER_STATUS_CACHE_MS so a
   * burst of new conversations does not ask identity once per conversation (a deactivation is seen within that time).
   * An unknown user is inactive; undefined when identity cannot say.
   */
  async userActive(ctx: Forward, id: string): Promise<boolean | undefined> {
    const key = `${ctx.orgId}:${id}`;
    const hit = this.userActivity.get(key);
    if (hit && hit.until > Date.now()) return hit.active;
    let active: boolean;
    try {
      active = (await this.orgUser(ctx, id))?.status === 'active';
    } catch {
      return undefined;
    }
    if (this.userActivity.size > 10_000) this.userActivity.clear();
    this.userActivity.set(key, { active, until: Date.now() + USER_STATUS_CACHE_MS });
    return active;
  }

  /**
   * Who a phone number or uid is on the network, asked through the account (connector FindUser; an empty account:
   * the org's most recently connected one). The connector's answers keep their meaning (404, 409, 429, 400, 503).
   */
  async findNetworkUser(ctx: Forward, req: { accountId: string; phone?: string; chatnetUid?: string }): Promise<connector.FoundUser__Output> {
    try {
      return await this.connector().FindUser(req, ctx, { deadlineMs: this.config.CONNECTOR_DEADLINE_MS });
    } catch (err) {
      throw passThrough(err, 'chat connector');
    }
  }

  /** crm's contact for a conversation started from the CRM (LinkOutreachContact); crm's answers keep their meaning. */
  async linkOutreachContact(
    ctx: Forward,
    req: { contactId?: string; phone?: string; chatnetUid?: string; displayName?: string; avatar?: string; chatnetAccountId?: string },
  ): Promise<crm.OutreachContact__Output> {
    try {
      return await this.crm().LinkOutreachContact(req, ctx, { deadlineMs: this.config.CRM_DEADLINE_MS });
    } catch (err) {
      throw passThrough(err, 'crm');
    }
  }

  /** Whether the chat-network account belongs to the caller's org (connector GetAccount); unavailable when it cannot say. */
  async accountInOrg(ctx: Forward, id: string): Promise<boolean> {
    try {
      await this.connector().GetAccount({ id }, ctx, { deadlineMs: this.config.CONNECTOR_DEADLINE_MS });
      return true;
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (decodeRemoteError(err as { code?: number; details?: string }).grpcCode === status.NOT_FOUND) return false;
      this.log.warn({ err, accountId: id, ...traceFields(ctx) }, 'connector GetAccount failed');
      throw new AppError('unavailable', 'The chat connector is unavailable; try again shortly');
    }
  }

  private async unlessNotFound<T>(ctx: Forward, call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (decodeRemoteError(err as { code?: number; details?: string }).grpcCode === status.NOT_FOUND) return undefined;
      throw identityUnavailable(err, this.log, ctx);
    }
  }

  close(): void {
    this.made.forEach((c) => c.close());
    this.made.length = 0;
  }
}

/** How long an identity answer "active or not" is trusted by the rotation. */
const USER_STATUS_CACHE_MS = 30_000;

/** What messaging reads of a user (mentions, assignments). */
export type OrgUser = Pick<identity.User__Output, 'id' | 'email' | 'fullName' | 'status'>;

function identityUnavailable(err: unknown, log: Logger, ctx: Forward): AppError {
  log.warn({ err, ...traceFields(ctx) }, 'identity user lookup failed');
  return new AppError('unavailable', 'The identity service is unavailable; try again shortly');
}

const KIND_OF: Partial<Record<number, ErrorKind>> = {
  [status.INVALID_ARGUMENT]: 'invalid_argument',
  [status.PERMISSION_DENIED]: 'permission_denied',
  [status.NOT_FOUND]: 'not_found',
  [status.ALREADY_EXISTS]: 'already_exists',
  [status.FAILED_PRECONDITION]: 'failed_precondition',
  [status.RESOURCE_EXHAUSTED]: 'rate_limited',
};

/** Another service's decision, unchanged (status, code, details, retry-after); a failure to answer is unavailable. */
function passThrough(err: unknown, name: string): AppError {
  if (err instanceof AppError) return err;
  const e = decodeRemoteError(err as { code?: number; details?: string });
  const kind = KIND_OF[e.grpcCode];
  if (!kind) return new AppError('unavailable', `The ${name} service is unavailable; try again shortly`);
  return new AppError(kind, e.message, { code: e.code, details: e.details, retryAfter: e.retryAfter });
}

/** True when a failed call certainly did not reach (or was refused by) the network: safe to retry later. */
export function sendDefinitelyFailed(err: unknown): boolean {
  return !(err instanceof AppError && err.code === 'send_outcome_unknown');
}

/** Map a connector error to what the caller of a send should see. */
function connectorError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = decodeRemoteError(err as { code?: number; details?: string });
  switch (e.grpcCode) {
    case status.NOT_FOUND:
      return new AppError('not_found', 'Chat-network account not found', { code: 'account_not_found' });
    case status.FAILED_PRECONDITION:
      return new AppError('failed_precondition', `Chat-network account cannot send: ${e.message}`, {
        code: e.code === 'failed_precondition' ? 'account_not_connected' : e.code,
      });
    case status.INVALID_ARGUMENT:
      return new AppError('invalid_argument', e.message, { details: e.details });
    case status.RESOURCE_EXHAUSTED:
      return new AppError('rate_limited', e.message, { retryAfter: e.retryAfter ?? 1 });
    case status.DEADLINE_EXCEEDED:
      // The network may or may not have taken the message: the idempotency key stays claimed.
      return new AppError('unavailable', 'The chat connector did not answer in time; the message may or may not have been sent', {
        code: 'send_outcome_unknown',
      });
    case status.UNAVAILABLE:
      return new AppError('unavailable', 'The chat connector is unavailable; try again shortly');
    default:
      return new AppError('unavailable', 'The chat connector failed to send the message', { code: 'connector_error' });
  }
}
