/**
 * The wire between the standalone sandbox network (src/sandbox-network) and the connector's remote sandbox driver:
 * one WebSocket per session, JSON frames, as a real network's client holds one socket per logged-in account. The
 * client opens with `login` or `restore`; the network answers `qr` (any number), then `session` or `refused`. Then
 * the network pushes `news` (a message, a receipt…), each acknowledged by the client with `ack` once the connector
 * recorded it (or `nack`); the client makes `call`s (send, list friends…), each answered by `result` or `error`. The
 * network ends a connection it cut with `disconnect`.
 *
 * Dates travel as ISO strings (JSON.stringify writes them so); the reviving functions below turn them back.
 */
import { Readable } from 'node:stream';
import type { ChatnetProfile, DisconnectInfo, InboundMessage, OutboundFile, ReactionNotice, RecallNotice, SeenReceipt } from './driver';

/** The path of the network's WebSocket endpoint for clients. */
export const CLIENT_PATH = '/client';

/** What the network pushes to a connection, by kind. */
export const NEWS_KINDS = ['message', 'seen', 'recall', 'reaction', 'friend_accepted', 'friends_changed'] as const;
export type NewsKind = (typeof NEWS_KINDS)[number];

/** What a client may ask of its session (ChatnetSession's methods that reach the network). */
export const CALL_METHODS = ['sendMessage', 'listFriends', 'findUser', 'sendFriendRequest', 'markSeen', 'recall', 'react'] as const;
export type CallMethod = (typeof CALL_METHODS)[number];

export type ClientFrame =
  | { t: 'login'; accountId: string; qrTtlMs: number; maxRefreshes: number }
  | { t: 'restore'; accountId: string; sessionData: string }
  | { t: 'call'; id: number; method: CallMethod; args: unknown[] }
  | { t: 'ack'; id: number }
  | { t: 'nack'; id: number; message: string };

export type NetworkFrame =
  | { t: 'qr'; code: string; expiresAt: string }
  | { t: 'session'; sessionData: string; profile: ChatnetProfile }
  | { t: 'refused'; kind: 'session_expired' | 'login_failed'; reason?: string; message: string }
  | { t: 'news'; id: number; kind: NewsKind; data: unknown }
  | { t: 'result'; id: number; value: unknown }
  | { t: 'error'; id: number; kind?: 'friend_required'; message: string }
  | { t: 'disconnect'; info: DisconnectInfo };

/** An inbound message as it travels (sentAt a string), back to the driver's shape. */
export function reviveMessage(m: Omit<InboundMessage, 'sentAt'> & { sentAt: string }): InboundMessage {
  return { ...m, sentAt: new Date(m.sentAt) };
}

export function reviveReceipt(r: Omit<SeenReceipt, 'seenAt'> & { seenAt: string }): SeenReceipt {
  return { ...r, seenAt: new Date(r.seenAt) };
}

export function reviveRecall(r: Omit<RecallNotice, 'recalledAt'> & { recalledAt: string }): RecallNotice {
  return { ...r, recalledAt: new Date(r.recalledAt) };
}

export function reviveReaction(r: Omit<ReactionNotice, 'at'> & { at: string }): ReactionNotice {
  return { ...r, at: new Date(r.at) };
}

/** The control actions the connector asks of the standalone network's live side (`POST /live/:accountId/:action`). */
export const LIVE_ACTIONS = ['scan', 'message', 'seen', 'recall', 'react', 'friend_accepted', 'drop', 'hold'] as const;
export type LiveAction = (typeof LIVE_ACTIONS)[number];

/** A file of a send as it crosses the wire (its bytes in base64). */
export interface WireFile {
  fileName: string;
  mimeType: string;
  size: number;
  contentBase64: string;
}

/** A file of a send, back to what the network's session reads (its bytes streamed once per open). */
export function fileFromWire(f: WireFile): OutboundFile {
  const bytes = Buffer.from(f.contentBase64, 'base64');
  return { fileName: f.fileName, mimeType: f.mimeType, size: f.size, open: async () => Readable.from([bytes]) };
}
