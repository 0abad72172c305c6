import { AppError, traceFields } from '@crm/grpc-kit';
import type { Logger } from '@crm/logger';
import type { ConnectorConfig } from '../config';
import { FriendRequiredError, type MessageRef, type OutboundMessage, type ReadMessage, type ThreadType } from '../drivers';
import type { FileReader, MessagingFiles } from '../files';
import type { ConnectorRedis } from '../redis';
import type { LiveSessions } from './live-sessions';

/** A send as the pool takes it: files named by their messaging attachment ids (fetched only when the driver reads them). */
export type Outbound = Omit<OutboundMessage, 'attachments'> & { attachments?: AttachmentRef[] };

export interface AttachmentRef {
  id: string;
  fileName: string;
  mimeType: string;
  size: number;
}

/** The call a command is made for: its trace, for the lines logged about it. */
export interface Traced {
  traceparent?: string;
}

/** The call a send is made for: whom its files are read for (FileReader), and its trace. */
export type Caller = Omit<FileReader, 'orgId'> & Traced;

export interface SessionCommandsOptions {
  config: ConnectorConfig;
  redis: ConnectorRedis;
  log: Logger;
  /** Sent files are streamed from messaging. */
  files: Pick<MessagingFiles, 'open'>;
  live: LiveSessions;
}

/**
 * What users do through a live session held here: send (once per client message id, across retries and takeovers),
 * mark read, recall, react. A refusal of the network becomes an error with a code the caller can act on.
 */
export class SessionCommands {
  constructor(private readonly o: SessionCommandsOptions) {}

  /** `caller`: the request id and the origin of the call being served (files are read from messaging under it), and its trace. */
  async send(
    accountId: string,
    orgId: string,
    m: Outbound,
    clientMessageId: string,
    { traceparent, ...caller }: Caller = {},
  ): Promise<{ chatnetMessageId: string; sentAt: string }> {
    const session = this.o.live.liveSession(accountId, orgId);
    const key = clientMessageId ? `${this.o.config.REDIS_PREFIX}chatnet:sent:${accountId}:${clientMessageId}` : '';
    if (key) {
      // The network knows nothing of our ids: a retried call (after a timeout, a takeover) must not send twice.
      const claimed = await this.o.redis.set(key, 'pending', { EX: 120, NX: true });
      if (claimed !== 'OK') {
        const prior = await this.o.redis.get(key);
        if (prior && prior !== 'pending') return JSON.parse(prior) as { chatnetMessageId: string; sentAt: string };
        throw new AppError('already_exists', 'A message with this clientMessageId is being sent', { code: 'send_in_progress' });
      }
    }
    let sent: { chatnetMessageId: string; sentAt: Date };
    try {
      sent = await session.sendMessage(this.withFiles({ ...caller, orgId }, m));
    } catch (err) {
      if (key) await this.o.redis.del(key).catch(() => undefined);
      if (err instanceof FriendRequiredError) {
        throw new AppError('failed_precondition', 'The recipient accepts messages only from friends: send a friend request first', {
          code: 'friend_required',
        });
      }
      this.o.log.warn({ err, accountId, ...traceFields({ traceparent }) }, 'sending through the chat network failed');
      throw new AppError('unavailable', 'The chat network did not accept the message; try again', { code: 'send_failed' });
    }
    const result = { chatnetMessageId: sent.chatnetMessageId, sentAt: sent.sentAt.toISOString() };
    if (key) await this.o.redis.set(key, JSON.stringify(result), { EX: 24 * 3600 }).catch(() => undefined);
    return result;
  }

  /** Tell the network the account read messages of a thread; UNAVAILABLE when the network refused. */
  async markSeen(
    accountId: string,
    orgId: string,
    seen: { threadId: string; threadType: ThreadType; messages: ReadMessage[] },
    call: Traced = {},
  ): Promise<void> {
    const session = this.o.live.liveSession(accountId, orgId);
    try {
      await session.markSeen(seen.threadId, seen.threadType, seen.messages);
    } catch (err) {
      this.o.log.warn({ err, accountId, ...traceFields(call) }, 'marking messages seen on the chat network failed');
      throw new AppError('unavailable', 'The chat network did not accept the read mark; try again', { code: 'mark_seen_failed' });
    }
  }

  /** Recall a message the account sent; UNAVAILABLE `recall_failed` when the network refused. */
  async recall(accountId: string, orgId: string, ref: MessageRef, call: Traced = {}): Promise<void> {
    const session = this.o.live.liveSession(accountId, orgId);
    try {
      await session.recall(ref);
    } catch (err) {
      this.o.log.warn({ err, accountId, ...traceFields(call) }, 'recalling a message on the chat network failed');
      throw new AppError('unavailable', 'The chat network did not accept the recall; try again', { code: 'recall_failed' });
    }
  }

  /** The account's reaction on a message ('' takes it back); UNAVAILABLE `react_failed` when the network refused. */
  async react(accountId: string, orgId: string, ref: MessageRef, emoji: string, call: Traced = {}): Promise<void> {
    const session = this.o.live.liveSession(accountId, orgId);
    try {
      await session.react(ref, emoji);
    } catch (err) {
      this.o.log.warn({ err, accountId, ...traceFields(call) }, 'reacting to a message on the chat network failed');
      throw new AppError('unavailable', 'The chat network did not accept the reaction; try again', { code: 'react_failed' });
    }
  }

  /** The message as a driver sends it: each file's bytes are streamed from messaging when the driver reads them. */
  private withFiles(reader: FileReader, m: Outbound): OutboundMessage {
    const { attachments, ...rest } = m;
    if (!attachments?.length) return rest;
    return {
      ...rest,
      attachments: attachments.map((a) => ({
        fileName: a.fileName,
        mimeType: a.mimeType,
        size: a.size,
        open: () => this.o.files.open(reader, a.id),
      })),
    };
  }
}
