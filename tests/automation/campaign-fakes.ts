import { randomUUID } from 'node:crypto';
import {
  AppError,
  audienceOf,
  GrpcServer,
  type HandlersFor,
  type InternalPrincipal,
  loadProto,
  type ServiceName,
  serviceDefinition,
} from '@crm/grpc-kit';
import { createLogger } from '@crm/logger';
import { testAuth } from '@crm/testing';
import { withUnfaked } from '../support/fake-grpc';

const log = createLogger('campaign-test', process.env.TEST_LOG_LEVEL ?? 'silent');

async function fakeServer<N extends ServiceName>(proto: string, service: N, handlers: Partial<HandlersFor<N>>) {
  const ctor = serviceDefinition(loadProto(proto), service);
  const server = new GrpcServer(log, testAuth(audienceOf(service) as InternalPrincipal)).add(ctor, withUnfaked(ctor, handlers));
  const port = await server.listen('127.0.0.1', 0);
  return { addr: `127.0.0.1:${port}`, stop: () => server.stop(100) };
}

export interface Member {
  id: string;
  name: string;
  phone: string;
  email: string;
  chatnetUid: string;
  status: string;
  tags: string[];
  assignedUserId: string;
}

/**
 * crm's customer lists as campaigns see them (GetCustomerList, ResolveListMembers of the real contract):
 * per org, members resolved live in contact-id order, keyset pages.
 */
export async function fakeCrmLists() {
  const lists = new Map<string, { id: string; orgId: string; name: string; members: Member[] }>();
  const pageCalls: Array<{ listId: string; after: string; limit: number }> = [];
  const server = await fakeServer('crm/v1/crm.proto', 'crm.v1.CrmService', {
    GetCustomerList: async (req, ctx) => {
      const l = lists.get(req.id);
      if (!l || l.orgId !== ctx.orgId) throw new AppError('not_found', 'Customer list not found');
      return { id: l.id, name: l.name, status: 'active', contactCount: l.members.length };
    },
    ResolveListMembers: async (req, ctx) => {
      const l = lists.get(req.listId);
      if (!l || l.orgId !== ctx.orgId) throw new AppError('not_found', 'Customer list not found');
      pageCalls.push({ listId: req.listId, after: req.afterContactId, limit: req.limit });
      const sorted = [...l.members].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const rest = req.afterContactId ? sorted.filter((m) => m.id > req.afterContactId) : sorted;
      const page = rest.slice(0, Math.max(1, Math.min(req.limit || 100, 1000)));
      return { members: page, nextAfter: rest.length > page.length ? page[page.length - 1].id : '', total: sorted.length };
    },
  });
  return {
    ...server,
    pageCalls,
    /** A list of `n` new contacts (or the given ones) in the org. */
    list(orgId: string, n: number, name = 'VIP customers', make: (i: number) => Partial<Member> = () => ({})) {
      const members: Member[] = Array.from({ length: n }, (_, i) => ({
        id: randomUUID(),
        name: `Customer ${i + 1}`,
        phone: `+8490${String(1_000_000 + i).slice(1)}`,
        email: `c${i + 1}@example.test`,
        chatnetUid: `uid-${i + 1}`,
        status: 'customer',
        tags: [],
        assignedUserId: '',
        ...make(i),
      }));
      const id = randomUUID();
      lists.set(id, { id, orgId, name, members });
      return { id, members };
    },
    /** A list of the given members (e.g. contacts of the real crm). */
    put(orgId: string, members: Member[], name = 'Real contacts') {
      const id = randomUUID();
      lists.set(id, { id, orgId, name, members });
      return { id, members };
    },
    remove(listId: string) {
      lists.delete(listId);
    },
    members(listId: string) {
      return lists.get(listId)!.members;
    },
  };
}

export interface SendCall {
  at: number;
  orgId: string;
  conversationId: string;
  accountId: string;
  content: string;
  contentType: string;
  clientMessageId: string;
  source: string;
  outcome: 'sent' | 'replayed' | 'rejected' | 'rate_limited' | 'lost';
}

/**
 * messaging as the campaign sender sees it: LatestConversationForContact (and LatestConversationsForContacts, a
 * batch's at once) over conversations the test puts in, and SendMessage with the real pipeline's promises: it de-duplicates on clientMessageId (a
 * repeat answers the first result and sends nothing), and a per-account send limit answers 429 with a
 * Retry-After. `delivered` is what reached the network: one entry per message that really went out.
 */
export async function fakeCampaignMessaging() {
  const conversations = new Map<string, { id: string; accountId: string; contactId: string; orgId: string }>();
  const byId = new Map<string, { id: string; accountId: string; contactId: string; orgId: string }>();
  const calls: SendCall[] = [];
  const delivered = new Map<string, SendCall>();
  const rejected = new Set<string>();
  const limits = new Map<string, { max: number; windowMs: number; sends: number[] }>();
  let loseAnswers = 0;
  let sendDelayMs = 0;
  const server = await fakeServer('messaging/v1/messaging.proto', 'messaging.v1.MessagingService', {
    LatestConversationForContact: async (req, ctx) => {
      const c = conversations.get(`${ctx.orgId}/${req.contactId}`);
      return c ? { conversation: { id: c.id, contactId: c.contactId, chatnetAccountId: c.accountId, type: 'user', status: 'active' } } : {};
    },
    LatestConversationsForContacts: async (req, ctx) => ({
      conversations: (req.contactIds ?? []).flatMap((contactId) => {
        const c = conversations.get(`${ctx.orgId}/${contactId}`);
        return c ? [{ contactId, conversationId: c.id, chatnetAccountId: c.accountId }] : [];
      }),
    }),
    // A contact without a conversation is a lead this fake network does not know (as messaging answers for a
    // phone nobody uses on the network): skipped as not_on_network.
    StartConversation: async () => {
      throw new AppError('failed_precondition', 'Nobody uses this on the chat network', {
        code: 'not_on_network',
        details: [{ field: 'phone', message: 'is not on the chat network' }],
      });
    },
    SendMessage: async (req, ctx) => {
      if (sendDelayMs) await new Promise((r) => setTimeout(r, sendDelayMs));
      const conv = byId.get(req.conversationId);
      if (!conv || conv.orgId !== ctx.orgId) throw new AppError('not_found', 'Conversation not found');
      const call: SendCall = {
        at: Date.now(),
        orgId: ctx.orgId,
        conversationId: req.conversationId,
        accountId: conv.accountId,
        content: req.content,
        contentType: req.contentType,
        clientMessageId: req.clientMessageId,
        source: req.source,
        outcome: 'sent',
      };
      calls.push(call);
      const first = delivered.get(req.clientMessageId);
      if (first) {
        call.outcome = 'replayed';
        return {
          id: first.clientMessageId,
          conversationId: first.conversationId,
          content: first.content,
          contentType: 'text',
          senderName: 'Campaign',
          sentAt: new Date(first.at).toISOString(),
          status: 'sent',
          replayed: true,
        };
      }
      if (rejected.has(req.conversationId)) {
        call.outcome = 'rejected';
        throw new AppError('invalid_argument', 'content: the network refused this message', { details: [{ field: 'content', message: 'refused' }] });
      }
      const limit = limits.get(conv.accountId);
      if (limit) {
        const now = Date.now();
        limit.sends = limit.sends.filter((t) => t > now - limit.windowMs);
        if (limit.sends.length >= limit.max) {
          call.outcome = 'rate_limited';
          const retryAfter = Math.max(1, Math.ceil((limit.sends[0] + limit.windowMs - now) / 1000));
          throw new AppError('rate_limited', `Send limit reached for this chat-network account (campaign); retry in ${retryAfter} s`, {
            code: 'send_limit_reached',
            retryAfter,
          });
        }
        limit.sends.push(now);
      }
      delivered.set(req.clientMessageId, call);
      if (loseAnswers > 0) {
        loseAnswers--;
        call.outcome = 'lost';
        throw new AppError('unavailable', 'connection reset');
      }
      return {
        id: randomUUID(),
        conversationId: req.conversationId,
        content: req.content,
        contentType: req.contentType,
        senderName: 'Campaign',
        sentAt: new Date(call.at).toISOString(),
        status: 'sent',
        replayed: false,
      };
    },
  });
  return {
    ...server,
    calls,
    delivered: () => [...delivered.values()],
    /** Give a contact a conversation on an account (a new account unless given). */
    converse(orgId: string, contactId: string, accountId: string = randomUUID()) {
      const c = { id: randomUUID(), accountId, contactId, orgId };
      conversations.set(`${orgId}/${contactId}`, c);
      byId.set(c.id, c);
      return c;
    },
    conversationOf(orgId: string, contactId: string) {
      return conversations.get(`${orgId}/${contactId}`);
    },
    /** Every send into this conversation is refused for good (INVALID_ARGUMENT). */
    reject(conversationId: string) {
      rejected.add(conversationId);
    },
    /** The account's send governor: at most `max` sends in any `windowMs`, then 429 with Retry-After. */
    limit(accountId: string, max: number, windowMs: number) {
      limits.set(accountId, { max, windowMs, sends: [] });
    },
    /** The next `n` sends go out but their answers are lost (UNAVAILABLE). */
    loseAnswers(n: number) {
      loseAnswers = n;
    },
    slowSends(ms: number) {
      sendDelayMs = ms;
    },
  };
}
