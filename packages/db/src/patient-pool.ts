import { Pool, type PoolClient, type PoolConfig } from 'pg';

/**
 * The server's answers that mean "no room for a new connection right now": too many clients (max_connections or
 * a role's CONNECTION LIMIT, as when several deployments or a test suite share one server) and "starting up".
 */
const NO_ROOM = new Set(['53300', '57P03']);
const noRoom = (err: unknown) => NO_ROOM.has((err as { code?: unknown } | null)?.code as string);

/**
 * How long a caller of a pool with no connection at all waits in total for the server to have room before the
 * refusal reaches it: inside the 5 s deadline of an internal call, so the gateway still answers 503 with Retry-After
 * rather than 504. A pool that has connections waits in its own line instead, up to LINE_WAIT_MS.
 */
export const ROOM_WAIT_MS = 3000;
/** How long a caller of a pool that has connections waits in its line, refused by the server, before it gives up. */
export const LINE_WAIT_MS = 30_000;
const FIRST_RETRY_MS = 25;
const MAX_RETRY_MS = 500;
/** How long a pool that was refused stays at the connections it has before it asks the server for more again. */
export const HOLD_MS = 1000;

/**
 * A pg Pool that queues for a connection when the server refuses one for lack of room, instead of failing the
 * request at once. A pool that already holds connections stops asking for more for HOLD_MS (its max drops to what
 * it has), so the refused caller joins pg-pool's queue and takes the next connection released, in turn: retrying
 * the server instead would let callers that came later take the released connections while the refused one kept
 * asking, until its wait ran out (a 503 under a steady load). A pool with no connection at all tries again with
 * backoff (25 ms doubling to 500 ms, with jitter) for up to ROOM_WAIT_MS. Other errors, and a refusal that
 * outlasts that wait, reach the caller as before (UNAVAILABLE, 503). pg-pool's own query() goes through
 * connect(), so both paths wait.
 */
/** What openOneAtATime uses of pg-pool's internals. */
interface PoolInternals {
  _clients: unknown[];
  _pendingQueue: object[];
  newClient(item: object): void;
  _pulseQueue(): void;
}

export class PatientPool extends Pool {
  private readonly configuredMax = this.options.max;
  private heldUntil = 0;
  /**
   * Connections open to the server. totalCount also counts attempts still under way, and pg-pool replaces a
   * refused attempt with the next one for its queue before the refusal reaches us, so it cannot say how many
   * connections the server actually granted.
   */
  private established = 0;
  /** Callers in order of their first ask, and the ticket of each caller waiting in pg-pool's queue (connectInTurn). */
  private tickets = 0;
  private readonly ticketOf = new WeakMap<object, number>();

  /** ROOM_WAIT_MS unless the pool says otherwise (a service's start-up waits longer: prepareDatabase). */
  private readonly roomWaitMs: number;

  constructor(config?: PoolConfig & { roomWaitMs?: number }) {
    super(config);
    this.roomWaitMs = config?.roomWaitMs ?? ROOM_WAIT_MS;
    this.on('connect', () => void this.established++);
    this.on('remove', () => void this.established--);
    this.openOneAtATime();
  }

  /**
   * New connections are opened one at a time. pg-pool opens one for every caller that finds no idle connection, so a
   * burst (200 requests a second arriving at a quiet service) asked the server for a dozen or more at once: each a
   * new backend process, planning every named statement again and loading its caches, all competing for the same
   * cores as the requests, which then waited longer and asked for still more. Measured on two cores, 200 contact
   * creates a second through `npm start`: crm opened ~25 connections per burst and the first second's requests took
   * 200-400 ms. Now a caller that finds no idle connection while one is being opened waits in line; the next
   * connection released (a transaction here lasts milliseconds) or the one being opened serves it, and if callers
   * are still waiting when it is open the next one is opened (as HikariCP adds its connections, one at a time).
   * The line keeps its order (tickets, connectInTurn). pg-pool's newClient and _pulseQueue are private: the version
   * is pinned by package-lock, and without them the pool opens connections as pg-pool does.
   */
  private openOneAtATime(): void {
    const pool = this as unknown as PoolInternals;
    if (typeof pool.newClient !== 'function' || typeof pool._pulseQueue !== 'function' || !Array.isArray(pool._clients)) return;
    const open = pool.newClient.bind(this);
    pool.newClient = (item) => {
      // Attempts under way: clients counted by pg-pool that have not connected yet (a failed one leaves its list).
      if (pool._clients.length > this.established) {
        // A caller that was in line (pg-pool's queue hands its first to newClient) goes back to the front; a new
        // caller (connect) to the back, where connectInTurn finds it and places it by its ticket.
        if (this.ticketOf.has(item)) pool._pendingQueue.unshift(item);
        else pool._pendingQueue.push(item);
        return;
      }
      open(item);
    };
    // Once open, callers still in line are served: by an idle connection, or by opening the next one.
    this.on('connect', () => process.nextTick(() => pool._pulseQueue()));
  }

  override connect(): Promise<PoolClient>;
  override connect(callback: (err: Error | undefined, client: PoolClient | undefined, done: (release?: unknown) => void) => void): void;
  override connect(
    callback?: (err: Error | undefined, client: PoolClient | undefined, done: (release?: unknown) => void) => void,
  ): Promise<PoolClient> | void {
    const patient = this.connectWhenRoom();
    if (!callback) return patient;
    patient.then(
      (client) => callback(undefined, client, (release?: unknown) => client.release(release as Error | boolean | undefined)),
      (err: Error) => callback(err, undefined, () => undefined),
    );
  }

  private async connectWhenRoom(): Promise<PoolClient> {
    if (this.heldUntil && Date.now() >= this.heldUntil) this.endHold();
    const ticket = ++this.tickets;
    const asked = Date.now();
    const giveUpAt = asked + this.roomWaitMs;
    for (let wait = FIRST_RETRY_MS; ; wait = Math.min(wait * 2, MAX_RETRY_MS)) {
      try {
        return await this.connectInTurn(ticket);
      } catch (err) {
        if (!noRoom(err) || this.ending) throw err;
        // Connections of its own will come back: wait in line for one (pg-pool's queue), not for the server, past
        // ROOM_WAIT_MS: when a hold ends, pg-pool asks the server for a connection for the first caller in line, who
        // may have waited long already; a refusal is no reason to fail that caller. Only a wait past LINE_WAIT_MS,
        // longer than any call lives, ends with the refusal: a line that never moves (every connection held by
        // callers that wait for another) must not hang for ever.
        if (this.established > 0 && Date.now() - asked < LINE_WAIT_MS) {
          this.hold();
          continue;
        }
        if (Date.now() + wait > giveUpAt) throw err;
        await new Promise((r) => setTimeout(r, wait * (0.5 + Math.random())));
      }
    }
  }

  /**
   * pg-pool's connect(), keeping the caller's turn: pg-pool puts a caller that waits at the back of its queue, so a
   * caller refused at the end of each hold (pg-pool asks the server for the first in line) went to the back again
   * and again (waits of 8 s where the line was 2 s long). Each caller draws a ticket when it first asks, and one
   * asking again takes its place in the queue by its ticket. The queue is pg-pool's private array (the
   * version is pinned by package-lock); without it the caller simply waits at the back.
   */
  private connectInTurn(ticket: number): Promise<PoolClient> {
    const queue = (this as unknown as { _pendingQueue?: object[] })._pendingQueue;
    const before = Array.isArray(queue) ? queue.length : -1;
    const connecting = super.connect();
    if (!queue || queue.length !== before + 1) return connecting;
    const mine = queue.pop()!;
    this.ticketOf.set(mine, ticket);
    let at = queue.length;
    while (at > 0 && (this.ticketOf.get(queue[at - 1]) ?? 0) > ticket) at--;
    queue.splice(at, 0, mine);
    return connecting;
  }

  /** Ask the server for no connection beyond those this pool has, for HOLD_MS. */
  private hold(): void {
    this.options.max = Math.max(1, Math.min(this.options.max, this.established));
    this.heldUntil = Date.now() + HOLD_MS;
  }

  private endHold(): void {
    this.options.max = this.configuredMax;
    this.heldUntil = 0;
  }
}
