import { Pool, type PoolClient } from 'pg';

/**
 * The server's answers that mean "no room for a new connection right now": too many clients (max_connections or
 * a role's CONNECTION LIMIT, as when several deployments or a test suite share one server) and "starting up".
 */
const NO_ROOM = new Set(['53300', '57P03']);
const noRoom = (err: unknown) => NO_ROOM.has((err as { code?: unknown } | null)?.code as string);

/**
 * How long a caller waits in total for the server to have room before the refusal reaches it: inside the 5 s
 * deadline of an internal call, so the gateway still answers 503 with Retry-After rather than 504.
 */
export const ROOM_WAIT_MS = 3000;
const FIRST_RETRY_MS = 25;
const MAX_RETRY_MS = 500;

/**
 * A pg Pool that queues for a connection when the server refuses one for lack of room, instead of failing the
 * request at once: a new connection is tried again with backoff (25 ms doubling to 500 ms, with jitter) for up
 * to ROOM_WAIT_MS. Meanwhile a connection this pool releases serves the caller too (pg-pool hands it to the
 * queue). Other errors, and a refusal that outlasts the wait, reach the caller as before (UNAVAILABLE, 503).
 * pg-pool's own query() goes through connect(), so both paths wait.
 */
export class PatientPool extends Pool {
  override connect(): Promise<PoolClient>;
  override connect(callback: (err: Error | undefined, client: PoolClient | undefined, done: (release?: unknown) => void) => void): void;
  override connect(callback?: (err: Error | undefined, client: PoolClient | undefined, done: (release?: unknown) => void) => void): Promise<PoolClient> | void {
    const patient = this.connectWhenRoom();
    if (!callback) return patient;
    patient.then(
      (client) => callback(undefined, client, (release?: unknown) => client.release(release as Error | boolean | undefined)),
      (err: Error) => callback(err, undefined, () => undefined),
    );
  }

  private async connectWhenRoom(): Promise<PoolClient> {
    const giveUpAt = Date.now() + ROOM_WAIT_MS;
    for (let wait = FIRST_RETRY_MS; ; wait = Math.min(wait * 2, MAX_RETRY_MS)) {
      try {
        return await super.connect();
      } catch (err) {
        if (!noRoom(err) || this.ending || Date.now() + wait > giveUpAt) throw err;
        await new Promise((r) => setTimeout(r, wait * (0.5 + Math.random())));
      }
    }
  }
}
