import { afterSql, iso, isoOrUndefined, type Keyset, keysetPage, keyTimeSql, Queryable } from '@crm/db';
import { AttachmentRow, forMessages, toAttachment } from '../attachments';
import { lastMessageSet } from './last-message';

export interface MessageRow {
  id: string;
  org_id: string;
  conversation_id: string;
  chatnet_account_id: string;
  chatnet_message_id: string | null;
  direction: 'inbound' | 'outbound';
  content: string;
  content_type: string;
  sender_uid: string;
  sender_name: string;
  /** A group message's sender as a crm contact (migration 013); null for one-to-one threads and outbound. */
  sender_contact_id: string | null;
  is_read: boolean;
  is_replied: boolean;
  status: string;
  source: string;
  sent_by_user_id: string | null;
  client_message_id: string | null;
  sent_at: Date;
  seen_at: Date | null;
  /** The sender's own id of the message (migration 015); null when the network gave none. */
  cli_msg_id: string | null;
  /** Migration 018: the message this one quotes, when and by whom it was recalled. */
  quote_message_id: string | null;
  recalled_at: Date | null;
  recalled_by: 'agent' | 'contact' | null;
  /** The quoted message as stored (null when none, or when it is gone). */
  quote: { id: string; content: string; sender_name: string; recalled_by: string | null } | null;
  /** Its reactions, oldest first (`at` as PostgreSQL writes a timestamptz in JSON). */
  reactions: Array<{ emoji: string; by: 'agent' | 'contact'; user_id: string; at: string }>;
}

// The quote and the reactions ride on every read of a message (a correlated lookup each, by primary key), so every
// path that returns a message shows them. Always from an unaliased `messages` (SELECT … FROM messages, RETURNING).
const COLUMNS = `id, org_id, conversation_id, chatnet_account_id, chatnet_message_id, direction, content, content_type, sender_uid,
  sender_name, sender_contact_id, is_read, is_replied, status, source, sent_by_user_id, client_message_id, sent_at, seen_at,
  cli_msg_id, quote_message_id, recalled_at, recalled_by,
  (SELECT json_build_object('id', q.id, 'content', q.content, 'sender_name', q.sender_name, 'recalled_by', q.recalled_by)
     FROM messages q WHERE q.id = messages.quote_message_id AND q.org_id = messages.org_id) AS quote,
  COALESCE((SELECT json_agg(json_build_object('emoji', r.emoji, 'by', r.by_kind, 'user_id', r.user_id, 'at', r.created_at) ORDER BY r.created_at, r.user_id)
     FROM message_reactions r WHERE r.message_id = messages.id), '[]'::json) AS reactions`;

/** Who reads a message: an agent does not see the content of what the contact recalled (team leads and above do). */
export interface Reader {
  withholdRecalled: boolean;
}
const EVERYONE: Reader = { withholdRecalled: false };

const withheld = (recalledBy: string | null, reader: Reader) => reader.withholdRecalled && recalledBy === 'contact';

/** The quote, reactions and recall of a message, in the shapes of the API (shared by the internal, send and public shapes). */
function extrasOf(r: MessageRow, reader: Reader) {
  return {
    quote: r.quote
      ? { messageId: r.quote.id, senderName: r.quote.sender_name, ...(withheld(r.quote.recalled_by, reader) ? {} : { content: r.quote.content }) }
      : undefined,
    reactions: (r.reactions ?? []).map((x) => ({ emoji: x.emoji, by: x.by, userId: x.user_id, at: new Date(x.at).toISOString() })),
    recalledAt: isoOrUndefined(r.recalled_at),
  };
}

/** The internal API's Message, as `reader` may see it. */
export function toMessage(r: MessageRow, attachments: AttachmentRow[] = [], reader: Reader = EVERYONE) {
  const hide = withheld(r.recalled_by, reader);
  return {
    ...extrasOf(r, reader),
    contentWithheld: hide,
    id: r.id,
    conversationId: r.conversation_id,
    content: hide ? '' : r.content,
    contentType: r.content_type,
    senderUid: r.sender_uid,
    senderName: r.sender_name,
    // Who wrote a group message, as a crm contact; absent for one-to-one threads (the conversation's contact wrote it).
    senderContactId: r.sender_contact_id ?? undefined,
    isFromChatnet: r.direction === 'inbound',
    isRead: r.is_read,
    isReplied: r.is_replied,
    sentAt: iso(r.sent_at),
    // sent, seen once the recipient read it (a read receipt from the network), or recalled; isRead stays our own inbox flag.
    status: r.status,
    seenAt: isoOrUndefined(r.seen_at),
    sentByUserId: r.sent_by_user_id ?? undefined,
    source: r.source,
    attachments: attachments.map(toAttachment),
  };
}

/** The send response: the spec's send shape plus the attachments it carried. */
export function toSent(r: MessageRow, attachments: AttachmentRow[], replayed = false) {
  return {
    ...extrasOf(r, EVERYONE),
    id: r.id,
    conversationId: r.conversation_id,
    content: r.content,
    contentType: r.content_type,
    senderName: r.sender_name,
    sentAt: iso(r.sent_at),
    status: r.status,
    attachments: attachments.map(toAttachment),
    replayed,
  };
}

/**
 * Who wrote a message: the contact, a user of the org, or the system (automation, campaigns, the public API). A
 * message typed on the account's phone (source `phone`) was written by a person of the org, known to no CRM user.
 */
export function senderTypeOf(r: Pick<MessageRow, 'direction' | 'sent_by_user_id' | 'source'>): 'contact' | 'user' | 'system' {
  return r.direction === 'inbound' ? 'contact' : r.sent_by_user_id || r.source === 'phone' ? 'user' : 'system';
}

/** The public API's Message. */
export function toPublicMessage(r: MessageRow, attachments: AttachmentRow[]) {
  return {
    ...extrasOf(r, EVERYONE),
    id: r.id,
    senderType: senderTypeOf(r),
    senderName: r.sender_name,
    content: r.content,
    contentType: r.content_type,
    sentAt: iso(r.sent_at),
    attachments: attachments.map(toAttachment),
    conversationId: r.conversation_id,
    // sent, or seen once the recipient read it (as the internal Message's status).
    status: r.status,
  };
}

export interface NewInbound {
  id: string;
  orgId: string;
  conversationId: string;
  accountId: string;
  chatnetMessageId: string;
  content: string;
  contentType: string;
  senderUid: string;
  senderName: string;
  sentAt: Date;
  /** Group messages: the sender's crm contact (null while unknown). */
  senderContactId: string | null;
  /** Group messages: the group's name from the network ('' when it did not say); renames the conversation. */
  groupName: string;
  /** The sender's own id of the message ('' when the network gave none): needed to mark it read on the network. */
  cliMsgId: string;
}

/**
 * A group's name from the network renames its conversation (the copy of the name lists and search read), unless
 * the message is older than the conversation's last one: a late message must not bring back an old name.
 */
const RENAME = (name: string) =>
  `contact_name = CASE WHEN ${name} <> '' AND (last_message_at IS NULL OR m.sent_at >= last_message_at) THEN ${name} ELSE contact_name END`;

/** The conversation's last message becomes `m` (the inserted row's CTE), its preview from these parameters. */
const LAST_MESSAGE_M = (content: string, contentType: string, senderName: string) =>
  lastMessageSet({ id: 'm.id', sentAt: 'm.sent_at', content, contentType, senderName });

// Insert and bump the conversation in one round trip; a repeated network id inserts nothing and
// so updates nothing (the CTE feeds the UPDATE), which is how duplicates are dropped.
const INSERT_INBOUND = {
  name: 'msg_insert_inbound',
  text: `WITH m AS (
           INSERT INTO messages (id, org_id, conversation_id, chatnet_account_id, chatnet_message_id, direction, content, content_type,
                                 sender_uid, sender_name, sender_contact_id, is_read, is_replied, source, sent_at, cli_msg_id)
           VALUES ($1, $2, $3, $4, $5, 'inbound', $6, $7, $8, $9, $11::uuid, false, false, 'chatnet', $10, nullif($13::text, ''))
           ON CONFLICT (org_id, chatnet_account_id, chatnet_message_id) WHERE chatnet_message_id IS NOT NULL DO NOTHING
           RETURNING id, sent_at
         )
         UPDATE conversations c SET
           message_count = message_count + 1,
           unread_count = unread_count + 1,
           unreplied_count = unreplied_count + 1,
           last_activity_at = greatest(last_activity_at, now()),
           ${LAST_MESSAGE_M('$6', '$7', '$9')},
           ${RENAME('$12::text')}
         FROM m WHERE c.id = $3
         RETURNING c.contact_id, c.status, c.assignee_id`,
};

/**
 * Store an inbound message; `stored` is false when the network id was stored before. `status` and `assigneeId`
 * are the conversation's, read under the row lock the update took (the caller reactivates it when not active;
 * the assignee decides which sockets hear of the message).
 */
export async function insertInbound(
  db: Queryable,
  m: NewInbound,
): Promise<{ stored: boolean; contactId: string | null; status?: string; assigneeId: string | null }> {
  const { rows } = await db.query<{ contact_id: string | null; status: string; assignee_id: string | null }>({
    ...INSERT_INBOUND,
    values: [
      m.id,
      m.orgId,
      m.conversationId,
      m.accountId,
      m.chatnetMessageId,
      m.content,
      m.contentType,
      m.senderUid,
      m.senderName,
      m.sentAt,
      m.senderContactId,
      m.groupName,
      m.cliMsgId,
    ],
  });
  return { stored: rows.length === 1, contactId: rows[0]?.contact_id ?? null, status: rows[0]?.status, assigneeId: rows[0]?.assignee_id ?? null };
}

// The common case in one round trip: the thread's conversation already exists. Finds it, inserts the
// message (unless its network id is known) and bumps the conversation. No row back = no conversation yet.
const INSERT_INBOUND_BY_THREAD = {
  name: 'msg_insert_inbound_by_thread',
  text: `WITH conv AS (
           SELECT id, contact_id FROM conversations
           WHERE org_id = $2 AND chatnet_account_id = $3 AND thread_type = $10 AND thread_id = $11
         ), m AS (
           INSERT INTO messages (id, org_id, conversation_id, chatnet_account_id, chatnet_message_id, direction, content, content_type,
                                 sender_uid, sender_name, sender_contact_id, is_read, is_replied, source, sent_at, cli_msg_id)
           SELECT $1, $2, conv.id, $3, $4, 'inbound', $5, $6, $7, $8, $12::uuid, false, false, 'chatnet', $9, nullif($14::text, '') FROM conv
           ON CONFLICT (org_id, chatnet_account_id, chatnet_message_id) WHERE chatnet_message_id IS NOT NULL DO NOTHING
           RETURNING id, sent_at, conversation_id
         ), u AS (
           UPDATE conversations c SET
             message_count = message_count + 1,
             unread_count = unread_count + 1,
             unreplied_count = unreplied_count + 1,
             last_activity_at = greatest(last_activity_at, now()),
             ${LAST_MESSAGE_M('$5', '$6', '$8')},
             ${RENAME('$13::text')}
           FROM m WHERE c.id = m.conversation_id
           RETURNING c.id, c.status, c.assignee_id
         )
         SELECT conv.id, conv.contact_id, (SELECT count(*) FROM u)::int AS stored, (SELECT status FROM u) AS status,
                (SELECT assignee_id FROM u) AS assignee_id FROM conv`,
};

/**
 * Store an inbound message into its thread's existing conversation. Undefined when the thread has no
 * conversation yet; otherwise the conversation and whether the message was new.
 */
export async function insertInboundByThread(
  db: Queryable,
  m: Omit<NewInbound, 'conversationId'> & { threadType: string; threadId: string },
): Promise<{ conversationId: string; contactId: string | null; stored: boolean; status?: string; assigneeId: string | null } | undefined> {
  const { rows } = await db.query<{ id: string; contact_id: string | null; stored: number; status: string | null; assignee_id: string | null }>({
    ...INSERT_INBOUND_BY_THREAD,
    values: [
      m.id,
      m.orgId,
      m.accountId,
      m.chatnetMessageId,
      m.content,
      m.contentType,
      m.senderUid,
      m.senderName,
      m.sentAt,
      m.threadType,
      m.threadId,
      m.senderContactId,
      m.groupName,
      m.cliMsgId,
    ],
  });
  const r = rows[0];
  return r
    ? { conversationId: r.id, contactId: r.contact_id, stored: r.stored === 1, status: r.status ?? undefined, assigneeId: r.assignee_id ?? null }
    : undefined;
}

/** One inbound message of a batch, for its thread's existing conversation (see insertInboundBatch). */
export type NewThreadInbound = Omit<NewInbound, 'conversationId'> & { threadType: string; threadId: string };

/** What the batch statement says of one message whose thread has a conversation. */
export interface StoredInThread {
  conversationId: string;
  contactId: string | null;
  /** false: its network id was stored before (a redelivery or a duplicate within the batch). */
  stored: boolean;
  /** The conversation's status before this batch and its assignee, read under the row lock (when something was stored). */
  status?: string;
  assigneeId: string | null;
}

// The steady state of a busy inbox in one statement per batch instead of one per message: the conversations of
// the batch's threads are locked (in id order: two batches never wait on each other in a circle), every message
// whose thread has one is inserted (a known network id is skipped, as a second copy inside the batch is), and each
// conversation is bumped once by its count, its last message being the batch's newest (sent_at, then delivery
// order) unless it already has a newer one. A group's name comes from its newest message that carried one.
// Planned at every call, not prepared (no `name`): a generic plan made while the org had few conversations finds the
// batch's conversations by org_id alone and reads all of the org's for each thread once it has thousands (as
// threadsWithConversation did: conversations.repo.ts). Planning it costs ~0.9 ms a batch, ~0.15 ms a message in the
// known-contact run of bench/realtime (batches of ~6); the plan it replaces cost a burst of new senders 160 ms a batch.
const INSERT_INBOUND_BATCH = {
  text: `WITH input AS (
           SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                                $9::timestamptz[], $10::text[], $11::text[], $12::uuid[], $13::text[], $14::text[])
             WITH ORDINALITY AS i(id, org_id, account_id, chatnet_message_id, content, content_type, sender_uid, sender_name,
                                  sent_at, thread_type, thread_id, sender_contact_id, group_name, cli_msg_id, ord)
         ), conv AS (
           SELECT c.id, c.contact_id, c.org_id, c.chatnet_account_id, c.thread_type, c.thread_id FROM conversations c
           WHERE (c.org_id, c.chatnet_account_id, c.thread_type, c.thread_id) IN (SELECT org_id, account_id, thread_type, thread_id FROM input)
           ORDER BY c.id FOR UPDATE
         ), located AS (
           SELECT i.*, conv.id AS conversation_id, conv.contact_id FROM input i
           JOIN conv ON conv.org_id = i.org_id AND conv.chatnet_account_id = i.account_id AND conv.thread_type = i.thread_type AND conv.thread_id = i.thread_id
         ), m AS (
           INSERT INTO messages (id, org_id, conversation_id, chatnet_account_id, chatnet_message_id, direction, content, content_type,
                                 sender_uid, sender_name, sender_contact_id, is_read, is_replied, source, sent_at, cli_msg_id)
           SELECT id, org_id, conversation_id, account_id, chatnet_message_id, 'inbound', content, content_type, sender_uid, sender_name,
                  sender_contact_id, false, false, 'chatnet', sent_at, nullif(cli_msg_id, '')
           FROM located ORDER BY ord
           ON CONFLICT (org_id, chatnet_account_id, chatnet_message_id) WHERE chatnet_message_id IS NOT NULL DO NOTHING
           RETURNING id
         ), stored AS (
           SELECT l.* FROM located l JOIN m USING (id)
         ), newest AS (
           SELECT DISTINCT ON (conversation_id) conversation_id, id, sent_at, content, content_type, sender_name
           FROM stored ORDER BY conversation_id, sent_at DESC, ord DESC
         ), named AS (
           SELECT DISTINCT ON (conversation_id) conversation_id, group_name, sent_at
           FROM stored WHERE group_name <> '' ORDER BY conversation_id, sent_at DESC, ord DESC
         ), counts AS (
           SELECT conversation_id, count(*)::int AS n FROM stored GROUP BY conversation_id
         ), u AS (
           UPDATE conversations c SET
             message_count = message_count + counts.n,
             unread_count = unread_count + counts.n,
             unreplied_count = unreplied_count + counts.n,
             last_activity_at = greatest(last_activity_at, now()),
             ${lastMessageSet({ id: 'nw.id', sentAt: 'nw.sent_at', content: 'nw.content', contentType: 'nw.content_type', senderName: 'nw.sender_name' })},
             contact_name = CASE WHEN na.group_name IS NOT NULL AND (last_message_at IS NULL OR na.sent_at >= last_message_at) THEN na.group_name ELSE contact_name END
           FROM counts JOIN newest nw USING (conversation_id) LEFT JOIN named na USING (conversation_id)
           WHERE c.id = counts.conversation_id
           RETURNING c.id, c.status, c.assignee_id
         )
         SELECT l.ord::int AS ord, l.conversation_id, l.contact_id, (s.id IS NOT NULL) AS stored, u.status, u.assignee_id
         FROM located l LEFT JOIN stored s USING (id) LEFT JOIN u ON u.id = l.conversation_id`,
};

/**
 * Store the messages of a batch whose threads already have a conversation, in one round trip. The answer is in the
 * order of `items`: undefined where the thread has no conversation yet (the caller creates it and stores the message
 * with insertInbound). Only for messages of distinct network ids or redeliveries: a second copy is reported as not
 * stored, like a redelivery.
 */
export async function insertInboundBatch(db: Queryable, items: NewThreadInbound[]): Promise<Array<StoredInThread | undefined>> {
  if (items.length === 0) return [];
  const col = <T>(f: (m: NewThreadInbound) => T) => items.map(f);
  const { rows } = await db.query<{
    ord: number;
    conversation_id: string;
    contact_id: string | null;
    stored: boolean;
    status: string | null;
    assignee_id: string | null;
  }>({
    ...INSERT_INBOUND_BATCH,
    values: [
      col((m) => m.id),
      col((m) => m.orgId),
      col((m) => m.accountId),
      col((m) => m.chatnetMessageId),
      col((m) => m.content),
      col((m) => m.contentType),
      col((m) => m.senderUid),
      col((m) => m.senderName),
      col((m) => m.sentAt),
      col((m) => m.threadType),
      col((m) => m.threadId),
      col((m) => m.senderContactId),
      col((m) => m.groupName),
      col((m) => m.cliMsgId),
    ],
  });
  const out: Array<StoredInThread | undefined> = items.map(() => undefined);
  for (const r of rows) {
    out[r.ord - 1] = {
      conversationId: r.conversation_id,
      contactId: r.contact_id,
      stored: r.stored,
      status: r.status ?? undefined,
      assigneeId: r.assignee_id ?? null,
    };
  }
  return out;
}

export interface NewOutbound {
  id: string;
  orgId: string;
  conversationId: string;
  accountId: string;
  chatnetMessageId: string;
  content: string;
  contentType: string;
  senderName: string;
  source: string;
  sentByUserId: string | null;
  clientMessageId: string | null;
  sentAt: Date;
  /** The message of the conversation it replies to. */
  quoteMessageId: string | null;
}

/** Store a sent message; undefined when the network id is already stored (its echo came in first). */
export async function insertOutbound(db: Queryable, m: NewOutbound): Promise<MessageRow | undefined> {
  const { rows } = await db.query<MessageRow>(
    `INSERT INTO messages (id, org_id, conversation_id, chatnet_account_id, chatnet_message_id, direction, content, content_type,
                           sender_uid, sender_name, is_read, is_replied, source, sent_by_user_id, client_message_id, sent_at, quote_message_id)
     VALUES ($1, $2, $3, $4, $5, 'outbound', $6, $7, '', $8, true, false, $9, $10, $11, $12, $13)
     ON CONFLICT (org_id, chatnet_account_id, chatnet_message_id) WHERE chatnet_message_id IS NOT NULL DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      m.id,
      m.orgId,
      m.conversationId,
      m.accountId,
      m.chatnetMessageId || null,
      m.content,
      m.contentType,
      m.senderName,
      m.source,
      m.sentByUserId,
      m.clientMessageId,
      m.sentAt,
      m.quoteMessageId,
    ],
  );
  return rows[0];
}

// A read receipt names some messages (often only the newest one read); reading a message means having seen
// everything the account sent before it in the thread, so every outbound message up to the newest one named
// moves from sent to seen. Never back: only 'sent' rows change, so a repeated or older receipt changes nothing.
const MARK_SEEN = {
  name: 'msg_mark_seen',
  text: `WITH upto AS (
           SELECT max(sent_at) AS at FROM messages
           WHERE org_id = $1 AND chatnet_account_id = $2 AND chatnet_message_id = ANY($4::text[]) AND conversation_id = $3
         )
         UPDATE messages m SET status = 'seen', seen_at = greatest($5::timestamptz, m.sent_at)
         FROM upto
         WHERE m.conversation_id = $3 AND m.org_id = $1 AND m.direction = 'outbound' AND m.status = 'sent' AND m.sent_at <= upto.at
         RETURNING m.id, m.source, m.sent_at`,
};

/** Mark what a read receipt covers as seen; the messages that changed, oldest first. */
/**
 * A group sender's contact, found after crm was unreachable: every message of that sender in the conversation that
 * has none yet links it (through the conversation's messages index; no index on sender_uid).
 */
export async function linkSender(db: Queryable, orgId: string, conversationId: string, senderUid: string, contactId: string): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE messages SET sender_contact_id = $4
     WHERE org_id = $1 AND conversation_id = $2 AND direction = 'inbound' AND sender_uid = $3 AND sender_contact_id IS NULL`,
    [orgId, conversationId, senderUid, contactId],
  );
  return rowCount ?? 0;
}

/** The contact is gone from crm: its group messages keep their sender's name and uid, without the link. */
export async function unlinkSenderContact(db: Queryable, orgId: string, contactId: string): Promise<void> {
  await db.query('UPDATE messages SET sender_contact_id = NULL WHERE org_id = $1 AND sender_contact_id = $2', [orgId, contactId]);
}

export async function markSeen(db: Queryable, orgId: string, accountId: string, conversationId: string, chatnetMessageIds: string[], seenAt: Date) {
  const { rows } = await db.query<{ id: string; source: string; sent_at: Date }>({
    ...MARK_SEEN,
    values: [orgId, accountId, conversationId, chatnetMessageIds, seenAt],
  });
  return rows.sort((a, b) => a.sent_at.getTime() - b.sent_at.getTime() || a.id.localeCompare(b.id));
}

export async function findById(db: Queryable, orgId: string, id: string): Promise<MessageRow | undefined> {
  const { rows } = await db.query<MessageRow>(`SELECT ${COLUMNS} FROM messages WHERE org_id = $1 AND id = $2`, [orgId, id]);
  return rows[0];
}

/**
 * A message the CRM sent whose echo was stored first as typed on the phone: it becomes the CRM's (its user, source,
 * sender name and idempotency key). Undefined when the stored copy is not such an echo.
 */
export async function claimPhoneCopy(
  db: Queryable,
  id: string,
  m: { source: string; sentByUserId: string | null; senderName: string; clientMessageId: string | null; quoteMessageId: string | null },
): Promise<MessageRow | undefined> {
  const { rows } = await db.query<MessageRow>(
    `UPDATE messages SET source = $2, sent_by_user_id = $3, sender_name = $4, client_message_id = $5, quote_message_id = COALESCE($6, quote_message_id)
     WHERE id = $1 AND direction = 'outbound' AND source = 'phone' RETURNING ${COLUMNS}`,
    [id, m.source, m.sentByUserId, m.senderName, m.clientMessageId, m.quoteMessageId],
  );
  return rows[0];
}

export async function findByNetworkId(db: Queryable, orgId: string, accountId: string, chatnetMessageId: string) {
  const { rows } = await db.query<MessageRow>(
    `SELECT ${COLUMNS} FROM messages WHERE org_id = $1 AND chatnet_account_id = $2 AND chatnet_message_id = $3`,
    [orgId, accountId, chatnetMessageId],
  );
  return rows[0];
}

/** A page of a conversation's messages, newest first, with their attachments. */
export async function page(db: Queryable, orgId: string, conversationId: string, limit: number, offset: number) {
  const [{ rows: countRows }, { rows }] = await Promise.all([
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM messages WHERE org_id = $1 AND conversation_id = $2', [orgId, conversationId]),
    db.query<MessageRow>(
      `SELECT ${COLUMNS} FROM messages WHERE org_id = $1 AND conversation_id = $2 ORDER BY sent_at DESC, id DESC LIMIT $3 OFFSET $4`,
      [orgId, conversationId, limit, offset],
    ),
  ]);
  const files = await forMessages(
    db,
    orgId,
    rows.map((r) => r.id),
  );
  return { total: countRows[0].n, rows, files };
}

/**
 * A keyset page of a conversation's messages for the public API: newest first, or sentAt ascending for
 * incremental sync ("updated", with `updatedSince`): messages do not change after they are stored but for their
 * delivery status, so their sent time is the time to sync by.
 */
export async function pageAfter(db: Queryable, orgId: string, conversationId: string, limit: number, k: Keyset) {
  const args: unknown[] = [orgId, conversationId];
  const arg = (v: unknown) => {
    args.push(v);
    return `$${args.length}`;
  };
  const where = ['org_id = $1', 'conversation_id = $2'];
  const dir = k.order === 'updated' ? 'ASC' : 'DESC';
  if (k.updatedSince) where.push(`sent_at >= ${arg(k.updatedSince)}`);
  if (k.after) where.push(afterSql('sent_at', 'id', dir, k.after, arg));
  const { rows } = await db.query<MessageRow & { key_value: string }>(
    `SELECT ${COLUMNS}, ${keyTimeSql('sent_at')} AS key_value FROM messages WHERE ${where.join(' AND ')}
     ORDER BY sent_at ${dir}, id ${dir} LIMIT ${limit + 1}`,
    args,
  );
  const page = keysetPage(rows, limit);
  const files = await forMessages(
    db,
    orgId,
    page.rows.map((r) => r.id),
  );
  return { ...page, files };
}

/** When the message at `offset` of the conversation's newest-first order was sent (the edge of a page), if any. */
export async function sentAtOffset(db: Queryable, orgId: string, conversationId: string, offset: number): Promise<Date | undefined> {
  const { rows } = await db.query<{ sent_at: Date }>(
    'SELECT sent_at FROM messages WHERE org_id = $1 AND conversation_id = $2 ORDER BY sent_at DESC, id DESC LIMIT 1 OFFSET $3',
    [orgId, conversationId, offset],
  );
  return rows[0]?.sent_at;
}

/** Every inbound message before a reply counts as replied. */
export async function markReplied(db: Queryable, conversationId: string): Promise<void> {
  await db.query(`UPDATE messages SET is_replied = true WHERE conversation_id = $1 AND direction = 'inbound' AND NOT is_replied`, [conversationId]);
}

/** A message of the contact just marked read, as the network needs it named to mark it read there too. */
export interface NewlyRead {
  chatnetMessageId: string;
  cliMsgId: string;
  fromUid: string;
  contentType: string;
  sentAt: Date;
}

/**
 * Mark every message of the contact read; answers the newest `max` of those that were unread and that the network
 * can be told about (they carry both ids), oldest first.
 */
export async function markAllRead(db: Queryable, conversationId: string, max = 50): Promise<NewlyRead[]> {
  const { rows } = await db.query<{ chatnet_message_id: string; cli_msg_id: string; sender_uid: string; content_type: string; sent_at: Date }>(
    `WITH r AS (
       UPDATE messages SET is_read = true WHERE conversation_id = $1 AND direction = 'inbound' AND NOT is_read
       RETURNING chatnet_message_id, cli_msg_id, sender_uid, content_type, sent_at, id
     )
     SELECT * FROM (
       SELECT chatnet_message_id, cli_msg_id, sender_uid, content_type, sent_at, id FROM r
       WHERE chatnet_message_id IS NOT NULL AND cli_msg_id IS NOT NULL
       ORDER BY sent_at DESC, id DESC LIMIT $2
     ) newest ORDER BY sent_at, id`,
    [conversationId, max],
  );
  return rows.map((r) => ({
    chatnetMessageId: r.chatnet_message_id,
    cliMsgId: r.cli_msg_id,
    fromUid: r.sender_uid,
    contentType: r.content_type,
    sentAt: r.sent_at,
  }));
}

/**
 * markAllRead for many conversations in one statement: answers, per conversation, the newest `max` of the messages it
 * marked that the network can be told about (both ids), oldest first. Conversations with none are absent.
 */
export async function markAllReadMany(db: Queryable, orgId: string, conversationIds: string[], max = 50): Promise<Map<string, NewlyRead[]>> {
  const { rows } = await db.query<{
    conversation_id: string;
    chatnet_message_id: string;
    cli_msg_id: string;
    sender_uid: string;
    content_type: string;
    sent_at: Date;
  }>(
    `WITH r AS (
       UPDATE messages SET is_read = true
       WHERE org_id = $1 AND conversation_id = ANY($2::uuid[]) AND direction = 'inbound' AND NOT is_read
       RETURNING conversation_id, chatnet_message_id, cli_msg_id, sender_uid, content_type, sent_at, id
     ), ranked AS (
       SELECT r.*, row_number() OVER (PARTITION BY conversation_id ORDER BY sent_at DESC, id DESC) AS newest
       FROM r WHERE chatnet_message_id IS NOT NULL AND cli_msg_id IS NOT NULL
     )
     SELECT conversation_id, chatnet_message_id, cli_msg_id, sender_uid, content_type, sent_at
     FROM ranked WHERE newest <= $3 ORDER BY conversation_id, sent_at, id`,
    [orgId, conversationIds, max],
  );
  const byConversation = new Map<string, NewlyRead[]>();
  for (const r of rows) {
    const list = byConversation.get(r.conversation_id) ?? [];
    list.push({
      chatnetMessageId: r.chatnet_message_id,
      cliMsgId: r.cli_msg_id,
      fromUid: r.sender_uid,
      contentType: r.content_type,
      sentAt: r.sent_at,
    });
    byConversation.set(r.conversation_id, list);
  }
  return byConversation;
}

/** Mark the newest message from the contact unread again; false when the contact never wrote. */
export async function markLatestInboundUnread(db: Queryable, conversationId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE messages SET is_read = false WHERE id = (
       SELECT id FROM messages WHERE conversation_id = $1 AND direction = 'inbound' ORDER BY sent_at DESC, id DESC LIMIT 1)`,
    [conversationId],
  );
  return rowCount === 1;
}

export async function setFlags(db: Queryable, orgId: string, conversationId: string, id: string, f: { isRead?: boolean; isReplied?: boolean }) {
  const { rows } = await db.query<MessageRow>(
    `UPDATE messages SET is_read = COALESCE($4, is_read), is_replied = COALESCE($5, is_replied)
     WHERE org_id = $1 AND conversation_id = $2 AND id = $3 RETURNING ${COLUMNS}`,
    [orgId, conversationId, id, f.isRead ?? null, f.isReplied ?? null],
  );
  return rows[0];
}

export type { AttachmentRow };

/**
 * Mark a message recalled (its content stays, for team leads and above); undefined when it already was. The status
 * moves to `recalled` whatever it was (sent, seen): a recalled message is no longer on the network.
 */
export async function markRecalled(db: Queryable, orgId: string, id: string, by: 'agent' | 'contact', at: Date): Promise<MessageRow | undefined> {
  const { rows } = await db.query<MessageRow>(
    `UPDATE messages SET status = 'recalled', recalled_at = $3, recalled_by = $4
     WHERE org_id = $1 AND id = $2 AND recalled_at IS NULL RETURNING ${COLUMNS}`,
    [orgId, id, at, by],
  );
  return rows[0];
}

/** A message of a conversation by its network id (what a recall, a reaction or a quote from the network names). */
export async function findInConversationByNetworkId(db: Queryable, orgId: string, conversationId: string, chatnetMessageId: string) {
  const { rows } = await db.query<MessageRow>(
    `SELECT ${COLUMNS} FROM messages WHERE org_id = $1 AND conversation_id = $2 AND chatnet_message_id = $3`,
    [orgId, conversationId, chatnetMessageId],
  );
  return rows[0];
}

/** Name the message a stored one quotes (an inbound reply whose quote the network named). */
export async function setQuote(db: Queryable, orgId: string, id: string, quoteMessageId: string): Promise<MessageRow | undefined> {
  const { rows } = await db.query<MessageRow>(`UPDATE messages SET quote_message_id = $3 WHERE org_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [
    orgId,
    id,
    quoteMessageId,
  ]);
  return rows[0];
}
