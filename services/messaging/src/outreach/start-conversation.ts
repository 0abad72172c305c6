import { AppError, invalid, notFound, OrgContext, requirePermission } from '@crm/grpc-kit';
import { withTransaction } from '@crm/db';
import { enqueueEvent } from '@crm/events';
import type { messaging } from '@crm/proto-types';
import { isUuid } from '@crm/validation';
import type { Deps } from '../deps';
import { convs, type ConversationRow, EVENTS } from '../conversations';
import { networkAvatar, openConversation } from '../contacts';
import { sendToConversation } from '../send';
import { viewerOf } from '../visibility';

type Request = messaging.StartConversationRequest__Output;

/** The person to reach, as the caller named them. */
type Target = { kind: 'contactId'; value: string } | { kind: 'phone'; value: string } | { kind: 'chatnetUid'; value: string };

/** Who the conversation is with: the network user, and what crm needs to find or make their contact. */
interface Resolved {
  accountId: string;
  uid: string;
  displayName: string;
  avatar: string;
  phone: string;
  contactId?: string;
}

const notOnNetwork = (field: string) =>
  new AppError('failed_precondition', 'Nobody uses this on the chat network', {
    code: 'not_on_network',
    details: [{ field, message: 'is not on the chat network' }],
  });

function targetOf(req: Request): Target {
  const given = (['contactId', 'phone', 'chatnetUid'] as const).filter((k) => (req[k] ?? '').trim() !== '');
  if (given.length !== 1) throw invalid('contactId', 'give exactly one of contactId, phone and chatnetUid');
  const kind = given[0];
  return { kind, value: req[kind]!.trim() } as Target;
}

/**
 * Who the conversation is with, resolved before any transaction opens: the contact's known uid, else a lookup of
 * its phone; or the phone or uid given (looked up, for the network's name). Lookups are paced and cached by the
 * connector per account.
 */
async function resolve(deps: Deps, ctx: OrgContext, accountId: string, target: Target): Promise<Resolved> {
  const lookup = async (q: { phone?: string; chatnetUid?: string }, field: string) => {
    const u = await deps.remote.findNetworkUser(ctx, { accountId, ...q });
    if (!u.found || !u.chatnetUid) throw notOnNetwork(field);
    return { accountId: u.accountId || accountId, uid: u.chatnetUid, displayName: u.displayName ?? '', avatar: networkAvatar(u.avatarUrl) };
  };
  if (target.kind === 'phone') return { ...(await lookup({ phone: target.value }, 'phone')), phone: target.value };
  if (target.kind === 'chatnetUid') return { ...(await lookup({ chatnetUid: target.value }, 'chatnetUid')), phone: '' };
  if (!isUuid(target.value)) throw notFound('Contact');
  // crm answers 404 for another org's contact, or one the agent may not see.
  const contact = await deps.remote.linkOutreachContact(ctx, { contactId: target.value });
  if (contact.chatnetUid) {
    // The account must still be the org's and connected: asked through the same lookup (cached, so cheap).
    const known = await lookup({ chatnetUid: contact.chatnetUid }, 'contactId');
    return { ...known, displayName: contact.name, phone: contact.phone, contactId: contact.id };
  }
  if (!contact.phone) {
    throw new AppError('failed_precondition', 'The contact has no phone number to find them on the chat network with', {
      code: 'no_phone',
      details: [{ field: 'contactId', message: 'has no phone number' }],
    });
  }
  return { ...(await lookup({ phone: contact.phone }, 'phone')), phone: contact.phone, contactId: contact.id };
}

/** The conversation as the caller may see it: an agent under `assigned` visibility gets 404 for one they may not. */
async function visible(deps: Deps, ctx: OrgContext, row: ConversationRow): Promise<ConversationRow> {
  const seen = await convs.findById(deps.pool, ctx.orgId, row.id, false, viewerOf(ctx));
  if (!seen) throw notFound('Conversation');
  return seen;
}

/**
 * Open (or find) the account's conversation with the network user, linked to its contact, the caller its assignee.
 * Idempotent: the conversation is unique per org, account and thread, and of two racing calls the one whose insert
 * loses reads the winner's (created=false).
 */
async function open(deps: Deps, ctx: OrgContext, who: Resolved): Promise<{ row: ConversationRow; created: boolean }> {
  const { orgId } = ctx;
  const existing = await convs.findByThread(deps.pool, orgId, who.accountId, 'user', who.uid);
  if (existing) return { row: await visible(deps, ctx, existing), created: false };
  // The contact before the transaction (a call to crm never holds a row lock or a connection).
  const contact = await deps.remote.linkOutreachContact(ctx, {
    contactId: who.contactId,
    phone: who.phone,
    chatnetUid: who.uid,
    displayName: who.displayName,
    avatar: who.avatar,
    chatnetAccountId: who.accountId,
  });
  const assigneeId = isUuid(ctx.userId) ? ctx.userId : null;
  const made = await withTransaction(deps.pool, async (db) => {
    // Contact known (crm answered above), so no contact link is asked for: only conversation.created is announced.
    const m = await openConversation(db, orgId, {
      accountId: who.accountId,
      threadType: 'user',
      threadId: who.uid,
      target: { chatnetUid: who.uid, displayName: who.displayName, avatar: who.avatar, chatnetAccountId: who.accountId, threadType: 'user' },
      contact: { id: contact.id, name: contact.name, avatar: contact.avatar, phone: contact.phone },
      avatar: who.avatar,
      traceparent: ctx.traceparent,
    });
    if (!m.created) return m;
    if (assigneeId) {
      // The agent who starts it works it (the inbox shows it as theirs, and `assigned` visibility lets them see it).
      await convs.setOwner(db, orgId, m.row.id, assigneeId, null);
      await enqueueEvent(db, {
        type: EVENTS.conversationAssigned,
        orgId,
        data: {
          conversationId: m.row.id,
          contactId: contact.id,
          chatnetAccountId: who.accountId,
          assigneeId,
          teamId: null,
          previousAssigneeId: null,
          assignedBy: assigneeId,
          reason: null,
        },
        traceparent: ctx.traceparent,
      });
    }
    return m;
  });
  if (!made.created) return { row: await visible(deps, ctx, made.row), created: false };
  // The insert answered the row as it is unless an assignee was set since (a new conversation is in no folder): a
  // campaign, which starts conversations without a user, reads nothing back.
  if (!assigneeId) return { row: { ...made.row, folder_ids: [] }, created: true };
  return { row: (await convs.findById(deps.pool, orgId, made.row.id))!, created: true };
}

/**
 * StartConversation (POST /api/v1/conversations, POST /api/public/conversations, campaigns): see the proto. A first
 * message goes through the one send pipeline once the conversation exists, so a recipient who takes messages only
 * from friends leaves an empty conversation and a 422 friend_required.
 */
export async function startConversation(deps: Deps, ctx: OrgContext, req: Request) {
  if (ctx.role) requirePermission(ctx.role, 'conversations:write');
  const target = targetOf(req);
  const accountId = (req.chatnetAccountId ?? '').trim();
  if (!accountId && ctx.userId) throw invalid('chatnetAccountId', 'is required');
  if (accountId && !isUuid(accountId)) throw new AppError('not_found', 'Chat-network account not found', { code: 'account_not_found' });
  const content = req.content ?? '';
  const attachmentIds = req.attachmentIds ?? [];
  const sending = content.trim() !== '' || attachmentIds.length > 0;

  const who = await resolve(deps, ctx, accountId, target);
  const { row, created } = await open(deps, ctx, who);
  const message = sending
    ? await sendToConversation(deps, ctx, {
        conversationId: row.id,
        content,
        contentType: req.contentType,
        clientMessageId: req.clientMessageId,
        source: req.source,
        attachmentIds,
      })
    : undefined;
  const now = message ? (await convs.findById(deps.pool, ctx.orgId, row.id))! : row;
  return { conversation: convs.toConversation(now), ...(message ? { message } : {}), created };
}
