import { Client } from 'pg';

interface Log {
  warn(obj: object, msg?: string): void;
}

export interface NotifyListenerOptions {
  /** Names the owner in log lines, e.g. "webhook worker". */
  name: string;
  /**
   * The database to LISTEN on, reached directly (a service's DATABASE_DIRECT_URL): through a transaction pooler the
   * LISTEN would stay on a server connection the pooler hands to others. Every listener of one process on the same URL
   * shares one connection.
   */
  databaseUrl: string;
  channel: string;
  log: Log;
  /** A notification arrived (its payload, '' when none). */
  onNotification(payload: string): void;
  /**
   * The connection is (back) up. Notifications sent while it was down are lost for good, so the owner
   * looks at the table once.
   */
  onConnected(): void;
  /** First wait before reconnecting; doubled after each failure up to `maxBackoffMs`. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * One LISTEN connection per database per process, shared by every listener on it (a service's claim loops
 * and timers): LISTEN holds a session, so each would otherwise cost PostgreSQL a connection of its own for
 * nothing but wake-ups, and connections are the scarce resource when replicas, PgBouncer's direct
 * connections and a test suite share one server (README: connection budget). Reconnects with exponential
 * backoff (and jitter, so replicas do not reconnect in step) when the connection is lost, LISTENs again on
 * every channel and tells each listener it is back.
 */
class SharedListenConnection {
  private client?: Client;
  private connecting?: Promise<void>;
  private retryTimer?: NodeJS.Timeout;
  private backoffMs: number;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  readonly listeners = new Set<NotifyListener>();

  constructor(
    private readonly databaseUrl: string,
    private readonly onIdle: () => void,
    opts: { minBackoffMs?: number; maxBackoffMs?: number },
  ) {
    this.minBackoffMs = opts.minBackoffMs ?? 100;
    this.maxBackoffMs = opts.maxBackoffMs ?? 10_000;
    this.backoffMs = this.minBackoffMs;
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  /** Adds a listener; resolves once its channel is listened on (rejects when the connection cannot be made now). */
  async add(listener: NotifyListener): Promise<void> {
    this.listeners.add(listener);
    if (this.client) {
      await this.client.query(`LISTEN ${listener.channel}`);
      listener.connectedNow();
      return;
    }
    await (this.connecting ??= this.connect().finally(() => (this.connecting = undefined)));
  }

  async remove(listener: NotifyListener): Promise<void> {
    if (!this.listeners.delete(listener)) return;
    const client = this.client;
    const stillListened = [...this.listeners].some((l) => l.channel === listener.channel);
    if (this.listeners.size === 0) {
      this.onIdle();
      clearTimeout(this.retryTimer);
      this.client = undefined;
      await client?.end().catch(() => undefined);
    } else if (client && !stillListened) {
      await client.query(`UNLISTEN ${listener.channel}`).catch(() => undefined);
    }
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.databaseUrl });
    let gone = false;
    const lost = (err?: Error) => {
      if (gone) return;
      gone = true;
      if (this.client === client) this.client = undefined;
      client.end().catch(() => undefined);
      if (this.listeners.size === 0) return;
      for (const l of this.listeners) l.lost(err);
      this.scheduleReconnect();
    };
    client.on('notification', (msg) => {
      for (const l of this.listeners) if (l.channel === msg.channel) l.notified(msg.payload ?? '');
    });
    client.on('error', lost);
    client.on('end', () => lost());
    try {
      await client.connect();
      // Listeners may join while the LISTENs are under way: go on until every channel asked for is listened on.
      const listened = new Set<string>();
      for (;;) {
        const missing = [...new Set([...this.listeners].map((l) => l.channel))].filter((c) => !listened.has(c));
        if (missing.length === 0) break;
        for (const channel of missing) {
          await client.query(`LISTEN ${channel}`);
          listened.add(channel);
        }
      }
    } catch (err) {
      gone = true;
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.listeners.size === 0) {
      gone = true;
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.backoffMs = this.minBackoffMs;
    for (const l of this.listeners) l.connectedNow();
  }

  /** Once per lost connection, whatever the number of listeners. */
  scheduleReconnect(): void {
    if (this.listeners.size === 0 || this.retryTimer) return;
    const wait = this.backoffMs * (0.5 + Math.random() / 2);
    this.backoffMs = Math.min(this.backoffMs * 2, this.maxBackoffMs);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.client || this.connecting) return;
      (this.connecting = this.connect().finally(() => (this.connecting = undefined))).catch((err) => {
        for (const l of this.listeners) l.reconnectFailed(err, this.backoffMs);
        this.scheduleReconnect();
      });
    }, wait);
    this.retryTimer.unref();
  }
}

const shared = new Map<string, SharedListenConnection>();

/**
 * LISTENs on a channel through the process's shared connection to its database (above). While the connection
 * is down the owner is told (onConnected again when it is back), and its timer or poll still finds every due
 * item: the notification is only the fast path.
 */
export class NotifyListener {
  private connection?: SharedListenConnection;
  private active = false;

  constructor(private readonly o: NotifyListenerOptions) {}

  get channel(): string {
    return this.o.channel;
  }

  /** Start listening; a connection that cannot be made now is retried in the background. */
  async start(): Promise<void> {
    if (this.active) return;
    this.active = true;
    let connection = shared.get(this.o.databaseUrl);
    if (!connection) {
      const url = this.o.databaseUrl;
      connection = new SharedListenConnection(url, () => shared.get(url) === connection && shared.delete(url), this.o);
      shared.set(url, connection);
    }
    this.connection = connection;
    try {
      await connection.add(this);
    } catch (err) {
      this.o.log.warn({ err }, `${this.o.name}: LISTEN connection failed; retrying in the background`);
      connection.scheduleReconnect();
    }
  }

  async stop(): Promise<void> {
    this.active = false;
    const c = this.connection;
    this.connection = undefined;
    await c?.remove(this);
  }

  /** For tests and health: whether notifications are being received right now. */
  get connected(): boolean {
    return this.active && this.connection?.connected === true;
  }

  /** @internal the shared connection's callbacks */
  notified(payload: string): void {
    if (this.active) this.o.onNotification(payload);
  }

  /** @internal */
  connectedNow(): void {
    if (this.active) this.o.onConnected();
  }

  /** @internal */
  lost(err?: Error): void {
    if (this.active) this.o.log.warn({ err }, `${this.o.name}: LISTEN connection lost; reconnecting`);
  }

  /** @internal */
  reconnectFailed(err: unknown, retryInMs: number): void {
    if (this.active) this.o.log.warn({ err, retryInMs }, `${this.o.name}: LISTEN reconnect failed`);
  }
}
