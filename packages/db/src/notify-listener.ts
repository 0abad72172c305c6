import { Client } from 'pg';

interface Log {
  warn(obj: object, msg?: string): void;
}

export interface NotifyListenerOptions {
  /** Names the owner in log lines, e.g. "webhook worker". */
  name: string;
  /** A dedicated connection: LISTEN holds its session, so it cannot be a pool connection. */
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
 * LISTENs on a channel with its own PostgreSQL connection and reconnects with exponential backoff (and
 * jitter, so replicas do not reconnect in step) when it is lost. While it is down the owner's poll still
 * finds every due item: the notification is only the fast path.
 */
export class NotifyListener {
  private client?: Client;
  private retryTimer?: NodeJS.Timeout;
  private backoffMs: number;
  private stopping = false;

  constructor(private readonly o: NotifyListenerOptions) {
    this.backoffMs = o.minBackoffMs ?? 100;
  }

  /** Connect once; a failure here is retried in the background like a lost connection. */
  async start(): Promise<void> {
    this.stopping = false;
    try {
      await this.connect();
    } catch (err) {
      this.o.log.warn({ err }, `${this.o.name}: LISTEN connection failed; polling until it is up`);
      this.scheduleReconnect();
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.retryTimer);
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }

  /** For tests and health: whether notifications are being received right now. */
  get connected(): boolean {
    return this.client !== undefined;
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.o.databaseUrl });
    let gone = false;
    const lost = (err?: Error) => {
      if (gone) return;
      gone = true;
      if (this.client === client) this.client = undefined;
      client.end().catch(() => undefined);
      if (this.stopping) return;
      this.o.log.warn({ err }, `${this.o.name}: LISTEN connection lost; polling until it is back`);
      this.scheduleReconnect();
    };
    client.on('notification', (msg) => this.o.onNotification(msg.payload ?? ''));
    client.on('error', lost);
    client.on('end', () => lost());
    try {
      await client.connect();
      await client.query(`LISTEN ${this.o.channel}`);
    } catch (err) {
      gone = true;
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.stopping) {
      gone = true;
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.backoffMs = this.o.minBackoffMs ?? 100;
    this.o.onConnected();
  }

  private scheduleReconnect(): void {
    if (this.stopping) return;
    const wait = this.backoffMs * (0.5 + Math.random() / 2);
    this.backoffMs = Math.min(this.backoffMs * 2, this.o.maxBackoffMs ?? 10_000);
    this.retryTimer = setTimeout(() => {
      this.connect().catch((err) => {
        this.o.log.warn({ err, retryInMs: this.backoffMs }, `${this.o.name}: LISTEN reconnect failed`);
        this.scheduleReconnect();
      });
    }, wait);
    this.retryTimer.unref();
  }
}
