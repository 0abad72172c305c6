import net from 'node:net';

/**
 * What a transaction pooler (PgBouncer, pool_mode=transaction) cannot carry from one transaction to the next: it
 * hands the server connection to another client when a transaction ends, so a LISTEN, a session-level advisory lock
 * (pg_advisory_xact_lock is per transaction, and fine), a SET without LOCAL, an SQL PREPARE (protocol-level named
 * statements are tracked by PgBouncer 1.21+), a WITH HOLD cursor or a temporary table would be left on a connection
 * the client no longer holds.
 */
export const SESSION_STATE: readonly RegExp[] = [
  /(^|;)\s*(UN)?LISTEN\s/i,
  /\bpg_(try_)?advisory_lock(_shared)?\s*\(/i,
  /(^|;)\s*SET\s+(?!LOCAL\b|TRANSACTION\b)/i,
  /\bset_config\s*\([^)]*,\s*false\s*\)/i,
  /(^|;)\s*PREPARE\s/i,
  /\bWITH\s+HOLD\b/i,
  /\bCREATE\s+(GLOBAL\s+|LOCAL\s+)?TEMP(ORARY)?\s+TABLE\b/i,
];

/** A session seen through the proxy. */
export interface ProxiedSession {
  database: string;
  user: string;
  /** The start-up packet's `options` (`-c name=value`): PgBouncer refuses the packet or drops them. */
  options?: string;
  /** The port of the proxy's own connection to PostgreSQL: pg_stat_activity.client_port of this session. */
  serverSidePort: number;
  /** Statements sent that hold session state (SESSION_STATE), as sent. */
  sessionState: string[];
  /** Every statement sent (simple queries and parses). */
  statements: number;
}

/** PostgreSQL's refusal of a connection over max_connections, as the server writes it. */
function tooManyClients(): Buffer {
  const fields = Buffer.concat(
    [
      ['S', 'FATAL'],
      ['V', 'FATAL'],
      ['C', '53300'],
      ['M', 'sorry, too many clients already'],
    ].map(([k, v]) => Buffer.from(`${k}${v}\0`)),
  );
  const body = Buffer.concat([fields, Buffer.from([0])]);
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

const PROTOCOL_3 = 196608;

/** The client's side of the wire protocol: its start-up packet, then the SQL of each simple query ('Q') and parse ('P'). */
class FrontendReader {
  private buffered: Buffer = Buffer.alloc(0);
  private started = false;

  constructor(
    private readonly onStartup: (params: Record<string, string>) => void,
    private readonly onSql: (sql: string) => void,
  ) {}

  push(chunk: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    for (;;) {
      const head = this.started ? 1 : 0;
      if (this.buffered.length < head + 4) return;
      const end = head + this.buffered.readInt32BE(head);
      if (this.buffered.length < end) return;
      const message = this.buffered.subarray(0, end);
      this.buffered = this.buffered.subarray(end);
      if (!this.started) {
        // An SSL or GSS encryption request comes first and the real start-up packet after it.
        if (message.readInt32BE(4) !== PROTOCOL_3) continue;
        this.started = true;
        const fields = message.subarray(8).toString('utf8').split('\0');
        const params: Record<string, string> = {};
        for (let i = 0; i + 1 < fields.length && fields[i]; i += 2) params[fields[i]] = fields[i + 1];
        this.onStartup(params);
      } else if (message[0] === 0x51 /* Q */) {
        this.onSql(message.subarray(5, message.indexOf(0, 5)).toString('utf8'));
      } else if (message[0] === 0x50 /* P: statement name, then the SQL */) {
        const sqlAt = message.indexOf(0, 5) + 1;
        this.onSql(message.subarray(sqlAt, message.indexOf(0, sqlAt)).toString('utf8'));
      }
    }
  }
}

export interface PostgresProxyOptions {
  /**
   * Connections held open at most; each one beyond is answered as PostgreSQL answers a connection over
   * max_connections (53300 after the start-up packet). Unlimited when unset.
   */
  limit?: number;
}

/**
 * A TCP proxy in front of PostgreSQL that tests put where a service's DATABASE_URL points: it can hold the server to
 * fewer connections than the services want (`limit`), and it records each session's start-up parameters and the
 * statements that would break behind a transaction pooler (`sessions`).
 */
export async function postgresProxy(target: URL, opts: PostgresProxyOptions = {}) {
  const stats = { open: 0, peak: 0, refused: 0 };
  const sessions: ProxiedSession[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (opts.limit !== undefined && stats.open >= opts.limit) {
      stats.refused++;
      // After the client's start-up message, as the server answers it.
      socket.once('data', () => socket.end(tooManyClients()));
      return;
    }
    stats.open++;
    stats.peak = Math.max(stats.peak, stats.open);
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(upstream);
    let session: ProxiedSession | undefined;
    // Known once connected; the client's start-up packet may arrive before that.
    let serverSidePort = 0;
    upstream.once('connect', () => {
      serverSidePort = upstream.localPort ?? 0;
      if (session) session.serverSidePort = serverSidePort;
    });
    const reader = new FrontendReader(
      (params) => {
        session = {
          database: params.database ?? params.user,
          user: params.user,
          options: params.options,
          serverSidePort,
          sessionState: [],
          statements: 0,
        };
        sessions.push(session);
      },
      (sql) => {
        if (!session) return;
        session.statements++;
        if (SESSION_STATE.some((re) => re.test(sql))) session.sessionState.push(sql);
      },
    );
    socket.on('data', (chunk: Buffer) => reader.push(chunk));
    let closed = false;
    const done = () => {
      if (closed) return;
      closed = true;
      stats.open--;
      socket.destroy();
      upstream.destroy();
    };
    upstream.on('error', done);
    upstream.on('close', done);
    socket.on('close', done);
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    stats,
    sessions,
    /** `url` with the proxy's address: the same user, password and database, through the proxy. */
    url: (url: string) => Object.assign(new URL(url), { hostname: '127.0.0.1', port: String(port) }).toString(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export type PostgresProxy = Awaited<ReturnType<typeof postgresProxy>>;
