import type http from 'node:http';

/**
 * Graceful drain of the HTTP server on shutdown. While draining, /readyz answers 503 so load balancers
 * stop sending new requests; then the listener closes and the requests already in flight finish, each on
 * a connection that closes after its response (a keep-alive connection left open would hold `server.close`
 * until its idle timeout); whatever is still running after the timeout is cut.
 */
export class HttpDrain {
  private draining = false;
  private server?: http.Server;
  private readonly inFlight = new Set<http.ServerResponse>();

  isDraining(): boolean {
    return this.draining;
  }

  attach(server: http.Server): void {
    this.server = server;
    server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
      this.inFlight.add(res);
      if (this.draining) res.shouldKeepAlive = false;
      res.once('close', () => {
        this.inFlight.delete(res);
        // A response whose headers went out before the drain kept its connection: close it now that it is idle.
        if (this.draining) setImmediate(() => server.closeIdleConnections());
      });
    });
  }

  /** Flip /readyz to 503 and keep serving for `delayMs`, so whoever routes here notices before the listener closes. */
  async begin(delayMs: number): Promise<void> {
    this.draining = true;
    for (const res of this.inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  }

  /** Stop accepting connections and wait for in-flight requests, at most `timeoutMs`; then cut the rest. */
  async close(timeoutMs: number): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.draining = true;
    for (const res of this.inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([closed, timedOut]);
    clearTimeout(timer);
    server.closeAllConnections();
  }
}
