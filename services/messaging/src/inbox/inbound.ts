import { createHash, randomUUID } from 'node:crypto';
import type { PoolClient } from '@crm/db';
import {
  enqueueEvent,
  enqueueEvents,
  eventOrigin,
  eventTraceFields,
  eventTraceparent,
  isEventOf,
  type EventEnvelope,
  type NewEvent,
  type ParsedEvent,
  type ParsedEventData,
} from '@crm/events';
import { traceFields } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { listedAssignmentUsers, autoAssignNew, warmRotation } from '../assignment';
import { files } from '../attachments';
import { convs, messages, EVENTS, type InboundData } from '../conversations';
import {
  openConversation,
  openConversations,
  senderTarget,
  threadTarget,
  tryResolveSender,
  tryUpsertContact,
  tryUpsertContacts,
  type ContactTarget,
  type LinkedContact,
} from '../contacts';
import { storeSelf, type ThreadContacts } from './self-messages';
import { cancelScheduledOnReply, type ContactWrote } from '../scheduled';
import { statusChangedData } from '../status';
import { disarmAutoClose } from '../auto-close';
import { planOutOfHoursReplies, type ReceivedMessage } from '../auto-messages';
import { planAutoReplies } from '../ai-auto-reply';
import { takeCsatReply } from '../csat';
import { isUuid } from '@crm/validation';
import { linkInboundQuote } from '../reactions';

/** The most files one inbound message may link (the connector sends at most 10). */
const MAX_INBOUND_ATTACHMENTS = 10;

/** The attachment ids of an inbound event (files the connector stored here), each once, at most MAX_INBOUND_ATTACHMENTS. */
function attachmentIdsOf(attachments: Array<{ id: string }> = []): string[] {
  return [...new Set(attachments.map((a) => a.id))].slice(0, MAX_INBOUND_ATTACHMENTS);
}

/** A stable event id per conversation (and group sender) and ten-minute window. */
function linkRequestId(conversationId: string, senderUid = ''): string {
  const who = senderUid ? `${conversationId}:sender:${senderUid}` : conversationId;
  const h = createHash('sha256')
    .update(`${who}:${Math.floor(Date.now() / 600_000)}`)
    .digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** chatnet.inbound data as its schema parsed it (the consumer's parseData): the connector's raw message. */
export type InboundEventData = ParsedEventData<'chatnet.inbound'>;

/**
 * The stored shape of a parsed chatnet.inbound: bounded lengths, a user thread's id falling back to its sender.
 * The schema checked types and ids; what it allows but can never be stored (no message id, no thread) is the reason.
 */
export function parseInbound(d: InboundEventData): { ok: true; value: InboundData } | { ok: false; reason: string } {
  const threadId = d.threadId || d.fromUid;
  if (!d.chatnetMessageId) return { ok: false, reason: 'chatnetMessageId is empty' };
  if (!threadId) return { ok: false, reason: 'threadId and fromUid are empty' };
  return {
    ok: true,
    value: {
      accountId: d.accountId,
      chatnetMessageId: d.chatnetMessageId.slice(0, 200),
      threadId: threadId.slice(0, 200),
      threadType: d.threadType,
      fromUid: d.fromUid.slice(0, 200),
      fromName: d.fromName.slice(0, 200),
      fromAvatar: d.fromAvatar.slice(0, 2000),
      content: d.content,
      contentType: (d.contentType || 'text').slice(0, 50),
      sentAt: new Date(d.sentAt),
      groupName: d.threadType === 'group' ? (d.groupName ?? '').trim().slice(0, 200) : '',
      attachmentIds: attachmentIdsOf(d.attachments),
      cliMsgId: (d.cliMsgId ?? '').slice(0, 200),
      fromSelf: d.fromSelf === true,
      quoteChatnetMessageId: (d.quoteChatnetMessageId ?? '').slice(0, 200),
    },
  };
}

/**
 * What the events of one batch share inside its one transaction: the contacts of new threads (asked from crm
 * all at once), the account's listed users, and the message.received events, written with one statement at
 * the end (after every other event of the batch, so a conversation's events keep their order), each in the trace of
 * the inbound event it answers.
 */
export class InboundBatch implements ThreadContacts {
  readonly received: Array<{ event: NewEvent; traceparent: string | undefined }> = [];
  /** The contact's messages stored by the batch (their conversations wait for us: no auto-close; maybe out of hours). */
  readonly replied: ReceivedMessage[] = [];
  /** Every message of a contact the batch stored (a CSAT answer too): their scheduled cancelIfReplied messages go. */
  readonly wrote: ContactWrote[] = [];
  /**
   * Messages stored by the batch statement, by event id, with the id they were stored under: null where the thread
   * had no conversation when the batch began (storeInbound takes the slow path); absent for events not in it.
   */
  private readonly inThreads = new Map<string, { messageId: string; result: messages.StoredInThread | null }>();
  /** Conversations whose status before the batch was already reported to one of its messages. */
  private readonly statusSeen = new Set<string>();
  private readonly listed = new Map<string, Promise<string[]>>();
  private readonly contacts = new Map<string, Promise<LinkedContact | undefined>>();
  private readonly senders = new Map<string, Promise<string | undefined>>();
  /** Conversations made by openNewThreads. */
  private readonly madeHere = new Set<string>();

  constructor(
    private readonly deps: Deps,
    private readonly db: PoolClient,
    /** What crm answered before the transaction opened (prepareInbound); without it, crm is asked from here. */
    private readonly prepared?: InboundPrepared,
    /** A stamp of each org's events in the batch: what vouches for the org when crm is asked from here (originsByOrg). */
    private readonly origins = new Map<string, string>(),
  ) {}

  /**
   * A new thread's contact: the one crm gave before the transaction (prepareInbound asks for every new thread of
   * the batch at once). A thread that was not new then has none here: it is stored without, and linked later
   * (messaging.contact_link), rather than holding the transaction open on crm.
   */
  contact(orgId: string, t: ContactTarget, traceparent: string | undefined): Promise<LinkedContact | undefined> {
    const key = contactKey(orgId, t);
    if (this.prepared) return Promise.resolve(this.prepared.contacts.get(key));
    let found = this.contacts.get(key);
    if (!found) this.contacts.set(key, (found = tryUpsertContact(this.deps, orgId, t, this.origins.get(orgId), traceparent)));
    return found;
  }

  /** A group sender's contact id: asked before the transaction, or remembered; else linked later. */
  sender(orgId: string, t: ContactTarget, traceparent: string | undefined): Promise<string | undefined> {
    const key = senderKey(orgId, t);
    if (this.prepared) return Promise.resolve(this.prepared.senders.get(key) ?? this.deps.senderContacts.get(orgId, t.chatnetUid));
    let found = this.senders.get(key);
    if (!found) this.senders.set(key, (found = tryResolveSender(this.deps, orgId, t, this.origins.get(orgId), traceparent)));
    return found;
  }

  /** Settings read once per account and batch: nothing in the batch changes them. */
  listedUsers(orgId: string, accountId: string): Promise<string[]> {
    const key = `${orgId}\n${accountId}`;
    let found = this.listed.get(key);
    if (!found) this.listed.set(key, (found = listedAssignmentUsers(this.db, orgId, accountId)));
    return found;
  }

  /**
   * The batch's work before its messages are taken one by one: the sender of every group message is asked from crm
   * (all at once), then every message whose thread has a conversation is stored with one statement
   * (messages.insertInboundBatch), then the threads without one get theirs (openNewThreads) and their messages a
   * second statement. The account's own messages are left to storeSelf.
   */
  async prefetch(events: ValidInbound[]): Promise<void> {
    const others = events.filter(({ d }) => !d.fromSelf);
    if (others.length === 0) return;
    const senders = await Promise.all(
      others.map(({ orgId, d, traceparent }) => {
        const sender = groupSender(d);
        return sender && this.sender(orgId, sender, traceparent);
      }),
    );
    const items = others.map(({ orgId, d }, i) => ({
      ...newInbound(randomUUID(), orgId, d, senders[i] ?? null),
      threadType: d.threadType,
      threadId: d.threadId,
    }));
    const results = await messages.insertInboundBatch(this.db, items);
    const fresh: Array<ValidInbound & { item: messages.NewThreadInbound }> = [];
    others.forEach((e, i) => {
      this.inThreads.set(e.eventId, { messageId: items[i].id, result: results[i] ?? null });
      if (!results[i]) fresh.push({ ...e, item: items[i] });
    });
    if (fresh.length) await this.openNewThreads(fresh);
  }

  /**
   * The threads of the batch that had no conversation: their contacts (crm was asked before the transaction), their
   * conversations made set-wise (openConversations: two statements and one for their events, however many), an owner
   * for each on a round-robin account, then their messages stored with one more batch statement, so storeInbound
   * takes the fast path for them too. One by one, a new sender cost four statements more than a known one (issue #28).
   */
  private async openNewThreads(fresh: Array<ValidInbound & { item: messages.NewThreadInbound }>): Promise<void> {
    const threads = await Promise.all(
      fresh.map(async ({ orgId, d, origin, traceparent }) => {
        const target = threadTarget(d);
        const contact = target ? await this.contact(orgId, target, traceparent) : undefined;
        const { accountId, threadType, threadId, groupName } = d;
        // Its events in the trace of the message that opened it.
        return { orgId, thread: { accountId, threadType, threadId, target, contact, groupName, avatar: target?.avatar, origin, traceparent } };
      }),
    );
    const made = await openConversations(this.db, threads);
    for (const [i, m] of made.entries()) {
      if (!m.created) continue;
      this.madeHere.add(m.row.id);
      // On a round_robin account its owner is chosen now, committed with the conversation.
      await autoAssignNew(this.deps, this.db, fresh[i].eventId, m.row, fresh[i].traceparent);
    }
    const stored = await messages.insertInboundBatch(
      this.db,
      fresh.map((f) => f.item),
    );
    fresh.forEach((f, i) => this.inThreads.set(f.eventId, { messageId: f.item.id, result: stored[i] ?? null }));
  }

  /** The batch made this conversation (openNewThreads): its contact link, if crm gave no contact, is asked already. */
  madeConversation(conversationId: string): boolean {
    return this.madeHere.has(conversationId);
  }

  /**
   * What the batch statement did with this event's message, if it was in it. A conversation's status before the
   * batch is told to its first stored message only: that one reactivates it, the later ones find it active.
   */
  storedInThread(eventId: string): { messageId: string; result: messages.StoredInThread | null } | undefined {
    const found = this.inThreads.get(eventId);
    const r = found?.result;
    if (!r || !r.stored) return found;
    if (this.statusSeen.has(r.conversationId)) return { messageId: found.messageId, result: { ...r, status: 'active' } };
    this.statusSeen.add(r.conversationId);
    return found;
  }

  /** The conversation kept its status (a CSAT answer left it closed): its next message of the batch finds it so. */
  statusKept(conversationId: string): void {
    this.statusSeen.delete(conversationId);
  }
}

/** The stored message of an inbound event (the thread's conversation still to be found). */
function newInbound(id: string, orgId: string, d: InboundData, senderContactId: string | null): Omit<messages.NewInbound, 'conversationId'> {
  return {
    id,
    orgId,
    accountId: d.accountId,
    chatnetMessageId: d.chatnetMessageId,
    content: d.content,
    contentType: d.contentType,
    senderUid: d.fromUid,
    senderName: d.fromName,
    sentAt: d.sentAt,
    senderContactId,
    groupName: d.groupName,
    cliMsgId: d.cliMsgId,
  };
}

/** Who wrote a group message, to link as a contact; undefined for one-to-one threads and the account's own messages. */
function groupSender(d: InboundData): ContactTarget | undefined {
  return d.threadType === 'group' && !d.fromSelf ? senderTarget(d.accountId, { uid: d.fromUid, name: d.fromName, avatar: d.fromAvatar }) : undefined;
}

const contactKey = (orgId: string, t: ContactTarget) => `${orgId}\n${t.chatnetAccountId}\n${t.threadType}\n${t.chatnetUid}`;
const senderKey = (orgId: string, t: ContactTarget) => `${orgId}\n${t.chatnetUid}`;

/** What a batch of chatnet.inbound events needs from crm, asked before its transaction opens. */
export interface InboundPrepared {
  /** New threads' contacts by contactKey (undefined: crm did not answer; the conversation is linked later). */
  contacts: Map<string, LinkedContact | undefined>;
  /** Group senders' contact ids by senderKey. */
  senders: Map<string, string | undefined>;
}

/**
 * The verified stamp (the connector's, the consumer checked it) of one event per org of a batch: any of an org's events
 * vouches for that org when crm is asked for its contacts (the origin of the call).
 */
function originsByOrg(events: EventEnvelope[]): Map<string, string> {
  const origins = new Map<string, string>();
  for (const e of events) {
    const origin = eventOrigin(e);
    if (origin && !origins.has(e.orgId)) origins.set(e.orgId, origin);
  }
  return origins;
}

/**
 * An event of a batch worth storing, its data parsed, with the stamp that vouches for its org (if any) and its trace
 * (eventTraceparent: passed explicitly, the service runs without an active context unless exporting, main.ts).
 */
interface ValidInbound {
  eventId: string;
  orgId: string;
  d: InboundData;
  origin?: string;
  traceparent: string | undefined;
}

/** The events of a batch worth storing: parsed, with a real org id, each once. */
function validInbound(events: EventEnvelope[]): ValidInbound[] {
  const valid: ValidInbound[] = [];
  const seen = new Set<string>();
  for (const e of events) {
    if (!isEventOf(e, 'chatnet.inbound')) continue;
    const parsed = parseInbound(e.data);
    // An org id that is no id fails on its own in storeInbound; it must not fail the batch statement of the others.
    // A second copy of one event in the batch (a redelivery) goes the slow way and finds its message stored.
    if (parsed.ok && isUuid(e.orgId) && !seen.has(e.id))
      valid.push({ eventId: e.id, orgId: e.orgId, d: parsed.value, origin: eventOrigin(e), traceparent: eventTraceparent(e) });
    seen.add(e.id);
  }
  return valid;
}

/**
 * The trace a call made for several events of one org continues (crm's contacts, identity's answers): theirs when
 * they all share one (one message, or one request's), else none, as the batch's active context had it.
 */
function tracesByOrg(valid: ValidInbound[]): Map<string, string | undefined> {
  const traces = new Map<string, string | undefined>();
  for (const { orgId, traceparent } of valid) {
    if (!traces.has(orgId)) traces.set(orgId, traceparent);
    else if (traceFields({ traceparent: traces.get(orgId) }).traceId !== traceFields({ traceparent }).traceId) traces.set(orgId, undefined);
  }
  return traces;
}

/**
 * The consumer's batchPrepare (issue #28 item 4): everything crm must say about a batch, asked before the
 * transaction opens, all at once: the contact of every thread that has no conversation yet, and every group
 * sender not remembered. A slow crm then delays the batch but holds no connection or lock of messaging's, and never
 * times out a transaction. crm unreachable: those threads are stored without a contact and linked later.
 */
export async function prepareInbound(deps: Deps, events: EventEnvelope[]): Promise<InboundPrepared> {
  const valid = validInbound(events);
  const origins = originsByOrg(events);
  const traces = tracesByOrg(valid);
  const senders = new Map<string, Promise<string | undefined>>();
  for (const { orgId, d } of valid) {
    const t = groupSender(d);
    if (t && !senders.has(senderKey(orgId, t)))
      senders.set(senderKey(orgId, t), tryResolveSender(deps, orgId, t, origins.get(orgId), traces.get(orgId)));
  }
  const threads = valid.map(({ orgId, d }) => ({
    orgId,
    accountId: d.accountId,
    threadType: d.threadType,
    threadId: d.threadId,
    t: threadTarget(d),
  }));
  // Threads seen with a conversation before are not asked about again; the others are, and remembered when found.
  const known = new Set<number>();
  const unsure: number[] = [];
  threads.forEach((t, i) => (deps.knownThreads.has(t) ? known.add(i) : unsure.push(i)));
  const found = await convs.threadsWithConversation(
    deps.pool,
    unsure.map((i) => threads[i]),
  );
  for (const j of found) {
    known.add(unsure[j]);
    deps.knownThreads.add(threads[unsure[j]]);
  }
  // New threads' contacts, asked per org in one call (crm's one transaction) rather than one call each.
  const wanted = new Map<string, Map<string, ContactTarget>>();
  const rotations = new Map<string, Promise<void>>();
  threads.forEach(({ orgId, accountId, t }, i) => {
    if (known.has(i)) return;
    if (t) {
      let ofOrg = wanted.get(orgId);
      if (!ofOrg) wanted.set(orgId, (ofOrg = new Map()));
      ofOrg.set(contactKey(orgId, t), t);
    }
    // A new conversation on a round_robin account is assigned in the transaction: identity's answers first.
    const account = `${orgId}\n${accountId}`;
    if (!rotations.has(account))
      rotations.set(
        account,
        warmRotation(deps, orgId, accountId, origins.get(orgId), traces.get(orgId)).catch(() => undefined),
      );
  });
  const settle = async <V>(m: Map<string, Promise<V>>) => new Map(await Promise.all([...m].map(async ([k, p]) => [k, await p] as const)));
  const asked = [...wanted].map(async ([orgId, ofOrg]) => {
    const found = await tryUpsertContacts(deps, orgId, [...ofOrg.values()], origins.get(orgId), traces.get(orgId));
    return [...ofOrg.keys()].map((key, i) => [key, found[i]] as const);
  });
  const [s, c] = await Promise.all([settle(senders), Promise.all(asked), ...rotations.values()]);
  return { senders: s, contacts: new Map(c.flat()) };
}

/**
 * A batch of chatnet.inbound events in the consumer's one transaction, applied one after another in delivery
 * order (the order the network gave within a conversation). crm was asked before the transaction (prepareInbound),
 * and identity's answers for round-robin accounts are in its cache by then.
 */
export async function storeInboundBatch(deps: Deps, db: PoolClient, events: EventEnvelope[], prepared?: InboundPrepared): Promise<void> {
  // Data parsed by its schema (the consumer's parseData); the queue is bound to chatnet.inbound only.
  const batch = new InboundBatch(deps, db, prepared, originsByOrg(events));
  const inbound = events.filter((e) => isEventOf(e, 'chatnet.inbound'));
  await batch.prefetch(validInbound(events));
  for (const e of inbound) await storeInbound(deps, db, e, batch);
  await cancelScheduledOnReply(db, batch.wrote);
  await afterReplies(deps, db, batch.replied);
  await enqueueEvents(
    db,
    batch.received.map(({ event, traceparent }) => ({ ...event, traceparent })),
  );
}

/**
 * The contact wrote into these conversations: their auto-close timers go (the last message is theirs), and those
 * hearing from them out of business hours get the out-of-hours reply, queued for after commit, and those on an
 * account in an org's AI auto-reply list are queued for the assistant (a Set lookup for every other one). A statement
 * or two per batch.
 */
async function afterReplies(deps: Deps, db: PoolClient, replied: ReceivedMessage[]): Promise<void> {
  if (replied.length === 0) return;
  await disarmAutoClose(db, [...new Set(replied.map((r) => r.conversationId))]);
  await planOutOfHoursReplies(deps, db, replied);
  await planAutoReplies(deps, db, replied);
}

/**
 * Store one inbound message, inside the consumer's transaction (which also records the event id).
 * Idempotent on (account, network message id): a second copy stores nothing and publishes nothing.
 * A new thread gets its contact from crm and a conversation; when crm is unreachable the conversation is
 * stored without a contact and a `messaging.contact_link` event retries the link with backoff. A group thread
 * gets no contact: its conversation carries the group's name, and each message its sender's contact (linked
 * later the same way when crm is unreachable). What it enqueues, calls and logs continues the event's trace, passed
 * explicitly (eventTraceparent, eventTraceFields): the service runs without an active context (main.ts).
 */
export async function storeInbound(deps: Deps, db: PoolClient, event: ParsedEvent<'chatnet.inbound'>, batch: InboundBatch): Promise<void> {
  const parsed = parseInbound(event.data);
  const traceparent = eventTraceparent(event);
  if (!parsed.ok) {
    deps.log.error({ eventId: event.id, reason: parsed.reason, ...eventTraceFields(event) }, 'chatnet.inbound event is malformed; dropped');
    return;
  }
  const d = parsed.value;
  if (d.fromSelf) return storeSelf(deps, db, event, d, batch);
  const orgId = event.orgId;
  const pre = batch.storedInThread(event.id);
  const messageId = pre?.messageId ?? randomUUID();
  const sender = groupSender(d);
  const senderContactId = sender ? ((await batch.sender(orgId, sender, traceparent)) ?? null) : null;
  const message = newInbound(messageId, orgId, d, senderContactId);
  const target = () => threadTarget(d);

  // Fast path: the thread already has its conversation (one statement; a group's new name renames it), done for
  // the whole batch by its statement when there is one.
  let stored = pre
    ? (pre.result ?? undefined)
    : await messages.insertInboundByThread(db, { ...message, threadType: d.threadType, threadId: d.threadId });
  const unlinked = stored && !stored.contactId && d.threadType === 'user' && !batch.madeConversation(stored.conversationId) ? target() : undefined;
  if (stored && unlinked) {
    // Still unlinked (crm was down past every retry, or the contact was deleted): ask again, at most once
    // per conversation every ten minutes (a repeated outbox id is ignored).
    await enqueueEvent(db, {
      id: linkRequestId(stored.conversationId),
      type: EVENTS.contactLink,
      orgId,
      data: { conversationId: stored.conversationId, ...unlinked, origin: eventOrigin(event) },
      traceparent,
    });
  }
  if (!stored) {
    // A new thread: a one-to-one thread's contact from crm (or none while crm is unreachable), then the
    // conversation. A group gets no contact: its conversation is named after the group.
    const t = target();
    const contact = t ? await batch.contact(orgId, t, traceparent) : undefined;
    const { accountId, threadType, threadId, groupName } = d;
    const made = await openConversation(db, orgId, {
      accountId,
      threadType,
      threadId,
      target: t,
      contact,
      groupName,
      avatar: t?.avatar,
      origin: eventOrigin(event),
      traceparent,
    });
    const conv = made.row;
    // On a round_robin account its owner is chosen now, committed with the conversation.
    if (made.created) await autoAssignNew(deps, db, event.id, conv, traceparent);
    const inserted = await messages.insertInbound(db, { ...message, conversationId: conv.id });
    stored = {
      conversationId: conv.id,
      contactId: inserted.contactId ?? conv.contact_id,
      stored: inserted.stored,
      status: inserted.status,
      assigneeId: inserted.assigneeId,
    };
  }
  if (!stored.stored) {
    deps.log.debug(
      { chatnetMessageId: d.chatnetMessageId, accountId: d.accountId, ...eventTraceFields(event) },
      'inbound message already stored; skipped',
    );
    return;
  }
  // The contact answered: messages scheduled into this conversation with cancelIfReplied are not sent (the batch's
  // one statement, storeInboundBatch).
  batch.wrote.push({ orgId, conversationId: stored.conversationId, sentAt: d.sentAt });
  // A reply names the message it quotes by its network id: linked to the stored one of this conversation.
  const quote = await linkInboundQuote(db, orgId, stored.conversationId, messageId, d.quoteChatnetMessageId);
  if (d.attachmentIds.length) {
    // The connector stored the files before announcing the message; they become the message's, in this transaction.
    // Only the org's files not yet linked: a redelivered event's copies (uploaded again) stay orphans for the sweeper.
    const linked = await files.linkToMessage(db, orgId, messageId, d.attachmentIds);
    if (linked.length < d.attachmentIds.length) {
      deps.log.warn(
        { chatnetMessageId: d.chatnetMessageId, expected: d.attachmentIds.length, linked: linked.length, ...eventTraceFields(event) },
        'some files of an inbound message were not found',
      );
    }
  }
  if (sender && !senderContactId) {
    // crm did not answer for the sender: link their messages in this conversation later, asked at most once per
    // sender and conversation every ten minutes.
    await enqueueEvent(db, {
      id: linkRequestId(stored.conversationId, sender.chatnetUid),
      type: EVENTS.contactLink,
      orgId,
      data: { conversationId: stored.conversationId, sender: true, ...sender, origin: eventOrigin(event) },
      traceparent,
    });
  }
  // A closed conversation's open CSAT survey takes the reply (a rating, then its comment) and stays closed.
  const csatReply =
    stored.status === 'closed' &&
    (await takeCsatReply(db, {
      orgId,
      conversationId: stored.conversationId,
      contactId: stored.contactId,
      chatnetAccountId: d.accountId,
      assigneeId: stored.assigneeId,
      content: d.content,
      at: d.sentAt,
      traceparent,
    }));
  if (csatReply) {
    // An answer to the survey waits for no reply: the closed conversation does not count it as unreplied.
    await messages.markReplied(db, stored.conversationId);
    await convs.recount(db, stored.conversationId);
    batch.statusKept(stored.conversationId);
  } else {
    const replied = {
      orgId,
      conversationId: stored.conversationId,
      chatnetAccountId: d.accountId,
      threadType: d.threadType,
      messageId,
      origin: eventOrigin(event),
    };
    batch.replied.push(replied);
  }
  if (stored.status && stored.status !== 'active' && !csatReply) {
    // The contact wrote again: a snoozed, pending, closed or archived conversation is back in the inbox. The
    // status was read under the row lock the insert took, so concurrent messages announce this once.
    await convs.reactivate(db, stored.conversationId);
    await enqueueEvent(db, {
      type: EVENTS.conversationStatusChanged,
      orgId,
      data: statusChangedData(
        { id: stored.conversationId, contact_id: stored.contactId, chatnet_account_id: d.accountId, assignee_id: stored.assigneeId },
        'active',
        stored.status,
        null,
        null,
      ),
      traceparent,
    });
  }
  const received: NewEvent = {
    type: EVENTS.messageReceived,
    orgId,
    data: {
      messageId,
      conversationId: stored.conversationId,
      contactId: stored.contactId,
      chatnetAccountId: d.accountId,
      threadId: d.threadId,
      threadType: d.threadType,
      senderUid: d.fromUid,
      senderName: d.fromName,
      // Group messages: the sender as a crm contact (contactId is the conversation's, none for a group).
      senderContactId,
      content: d.content,
      contentType: d.contentType,
      sentAt: d.sentAt.toISOString(),
      // Who should hear about it, as of this transaction, so consumers need no call back (automation's alerts; with
      // chatnetAccountId, the gateway's socket audience): the assignee (read under the row lock the insert took, after
      // any auto-assignment above), or when there is none, the users listed in the account's assignment settings.
      assigneeId: stored.assigneeId,
      eligibleUserIds: stored.assigneeId ? [] : await (batch ? batch.listedUsers(orgId, d.accountId) : listedAssignmentUsers(db, orgId, d.accountId)),
      quote,
    },
  };
  // Written later with the whole batch's: it keeps the trace of the inbound event it answers.
  if (batch) batch.received.push({ event: received, traceparent });
  else await enqueueEvent(db, { ...received, traceparent });
}
