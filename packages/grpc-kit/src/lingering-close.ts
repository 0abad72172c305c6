import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * How long, and how much more of a request body, a connection answered before its body was all read goes on reading
 * (and dropping) before it closes. Closing a socket with bytes still unread makes the kernel send a reset, and a client
 * still sending then fails its next write (EPIPE/ECONNRESET) and can lose the answer already on its way: the gateway's
 * proxy, cut off that way past messaging's hard cap on a loaded machine, answered 503 instead of passing the 413 on.
 * Apache and nginx do the same ("lingering close"). Bounded both ways, so a client streaming without end costs only
 * this much more than the limit that stopped it; a client still sending past these bounds may see the reset after all.
 *   LINGER_MS: time for a client to read the answer, however loaded either machine is.
 *   LINGER_BYTES: more than a connection holds in flight when the answer goes out (Linux's socket buffers grow to 4 MB
 *   to send and 6 MB to receive: on loopback, 4-7 MB arrived after the answer), so those bytes alone never end it.
 */
export const LINGER_MS = 3_000;
export const LINGER_BYTES = 16 * 1024 * 1024;

export interface LingerLimits {
  bytes: number;
  ms: number;
}

/**
 * For an answer given while the client is still sending its request body (`req.complete` false): call it before the
 * answer's headers go out. The answer says `Connection: close` (a connection with half a body unread is never reused),
 * the rest of the body is read and dropped (unpiped from wherever it went), and the function returned, called instead
 * of `res.end()` once the whole answer is written (its length declared, so the client has all of it before the end),
 * ends the response, and so closes the connection, once the client stopped sending, went away, or the limits ran out.
 */
export function lingeringClose(req: IncomingMessage, res: ServerResponse, limits: LingerLimits = { bytes: LINGER_BYTES, ms: LINGER_MS }): () => void {
  res.shouldKeepAlive = false;
  const dropped = dropRest(req, limits);
  return () => void dropped.then(() => res.end());
}

function dropRest(req: IncomingMessage, limits: LingerLimits): Promise<void> {
  req.unpipe();
  if (req.complete || req.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let bytes = 0;
    const done = () => {
      clearTimeout(timer);
      req.off('data', count).off('end', done).off('close', done);
      resolve();
    };
    const count = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limits.bytes) done();
    };
    const timer = setTimeout(done, limits.ms);
    req.on('data', count).once('end', done).once('close', done);
    req.resume();
  });
}
