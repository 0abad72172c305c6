import net from 'node:net';

/**
 * A TCP proxy in front of the broker that a test can break: `cut` is the broker gone (connections reset, new ones
 * refused), `withholdReplies` a broker that takes messages but answers nothing (no confirms), `restore` ends either.
 */
export class TcpProxy {
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  private mode: 'open' | 'cut' | 'withheld' = 'open';
  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    let proxy: TcpProxy | undefined;
    const server = net.createServer((client) => proxy!.accept(client, target));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new TcpProxy(server, (server.address() as net.AddressInfo).port);
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  url(url: string): string {
    return Object.assign(new URL(url), { hostname: '127.0.0.1', port: String(this.port) }).toString();
  }

  cut(): void {
    this.mode = 'cut';
    for (const p of this.pairs) {
      p.client.destroy();
      p.upstream.destroy();
    }
  }

  withholdReplies(): void {
    this.mode = 'withheld';
    // Unpiped, the broker's bytes wait in the socket's buffer until restore pipes them on.
    for (const p of this.pairs) p.upstream.unpipe(p.client);
  }

  restore(): void {
    if (this.mode === 'withheld') for (const p of this.pairs) p.upstream.pipe(p.client);
    this.mode = 'open';
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: net.Socket, target: { host: string; port: number }): void {
    if (this.mode === 'cut') {
      client.destroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    const pair = { client, upstream };
    this.pairs.add(pair);
    client.pipe(upstream);
    if (this.mode === 'open') upstream.pipe(client);
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) {
      s.on('error', end);
      s.on('close', end);
    }
  }
}
