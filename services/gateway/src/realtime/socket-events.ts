import type { AccessClaims } from '@crm/auth';
import type { ParsedEvent, ParsedEventData } from '@crm/events';
import type { Server, Socket } from 'socket.io';

// The socket.io contract with clients, typed the way the bus is (issue #30 item 2): every emit names an event of
// ServerToClientEvents and its payload is checked against it, as a producer's data is against the event catalogue.

/** The message events a socket receives as `message`; the realtime queue is bound to these (socket.ts ROUTED). */
export const MESSAGE_TYPES = ['message.received', 'message.sent', 'message.seen', 'message.recalled', 'message.reaction'] as const;
/** The conversation events a socket receives as `conversation`, narrowed by inbox visibility. */
export const CONVERSATION_TYPES = [
  'conversation.assigned',
  'conversation.status_changed',
  'conversation.priority_changed',
  'conversation.csat_received',
] as const;
type MessageType = (typeof MESSAGE_TYPES)[number];
type ConversationType = (typeof CONVERSATION_TYPES)[number];
/** `{type, ...data}` of each of `T`: one member per event type, so a client's `switch (payload.type)` narrows the rest. */
type Tagged<T extends MessageType | ConversationType> = T extends unknown ? { type: T } & ParsedEventData<T> : never;

export interface ServerToClientEvents {
  /** A login QR code for the account's room (and on joining it while one is pending). */
  qr: (payload: { accountId: string; qr: string; expiresAt: string | null }) => void;
  account_status: (
    payload: { status: 'connected' | 'disconnected' } & ParsedEventData<'chatnet_account.connected' | 'chatnet_account.disconnected'>,
  ) => void;
  message: (payload: Tagged<MessageType>) => void;
  conversation: (payload: Tagged<ConversationType>) => void;
  notification: (payload: ParsedEventData<'notification.created'>) => void;
  'user.availability': (payload: { userId: string; status: ParsedEventData<'user.availability_changed'>['status'] }) => void;
  /** The socket's session ended (sign-out, deactivation, a role change): it is disconnected right after. */
  session_ended: (payload: { reason: string }) => void;
}

/** What clients send: joining and leaving an account's room, with an acknowledgement. */
export interface ClientToServerEvents {
  join: (room: unknown, ack?: (r: { ok: boolean; error?: string }) => void) => void;
  leave: (room: unknown, ack?: (r: { ok: boolean }) => void) => void;
}

/** What the gateway keeps on each socket: the verified claims of its token. */
export interface SocketData {
  claims: AccessClaims;
}

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- no events between gateway instances
type InterServerEvents = {};
export type CrmServer = Server<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>;
export type CrmSocket = Socket<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>;

/** Where one event goes: rooms, a socket event and its payload, checked together. */
export type SocketRoute = {
  [E in keyof ServerToClientEvents]: { rooms: string[]; event: E; payload: Parameters<ServerToClientEvents[E]>[0] };
}[keyof ServerToClientEvents];

/**
 * Emit a route to this instance's sockets (every instance consumes every event itself: socket.ts), never through the
 * Redis adapter to the others. The union cannot be spread into emit's overloads; each route was checked when made.
 */
export function emitRoute(io: CrmServer, route: SocketRoute): void {
  (io.local.to(route.rooms).emit as (event: string, payload: unknown) => boolean)(route.event, route.payload);
}

/**
 * `{type, ...data}` of a message or conversation event. A ParsedEvent of several types pairs each type with its own
 * data, which TypeScript cannot carry through a spread, hence the one cast here.
 */
export function tagged<T extends MessageType | ConversationType>(e: ParsedEvent<T>): Tagged<T> {
  return { type: e.type, ...e.data } as Tagged<T>;
}
