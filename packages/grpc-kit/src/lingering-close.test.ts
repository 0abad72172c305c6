import http from 'node:http';
import net from 'node:net';
import { type LingerLimits, lingeringClose } from './lingering-close';

const MB = 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 7);

/** An HTTP server answering every request 413 at once, before reading its body, closing through lingeringClose. */
async function earlyAnswers(limits?: LingerLimits) {
  const read = { bytes: 0 };
  const server = http.createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (read.bytes += chunk.length));
    const end = lingeringClose(req, res, limits);
    res.writeHead(413, { 'content-type': 'text/plain', 'content-length': '9' });
    res.write('too large');
    end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, read, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** Writes up to `total` body bytes as fast as the connection takes them (Infinity: until it fails). */
async function sendBody(socket: net.Socket, total: number): Promise<void> {
  for (let wrote = 0; wrote < total && socket.writable; wrote += CHUNK.length) {
    if (!socket.write(CHUNK.subarray(0, Math.min(CHUNK.length, total - wrote))))
      await new Promise((resolve) => socket.once('drain', resolve).once('close', resolve));
  }
}

/**
 * A raw HTTP/1.1 POST declaring `contentLength` body bytes, of which `send` writes what it wants: what came back, and
 * how the connection ended (`end` for the server's clean close, else the socket's error code, e.g. ECONNRESET).
 */
function post(port: number, contentLength: number, send: (socket: net.Socket) => Promise<void>) {
  return new Promise<{ answer: string; closed: string; ms: number }>((resolve) => {
    const t0 = performance.now();
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    let closed = 'end';
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.on('error', (err: NodeJS.ErrnoException) => (closed = err.code ?? err.message));
    socket.on('close', () => resolve({ answer, closed, ms: performance.now() - t0 }));
    socket.on('connect', () => {
      socket.write(`POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: ${contentLength}\r\n\r\n`);
      void send(socket);
    });
  });
}

// An answer given before the request body was all read: the client gets it whole, and the connection closes only once
// the client stopped sending, or after a bounded linger (a client sending without end costs at most limits.bytes more).
describe('lingeringClose', () => {
  it('a client still sending reads the answer (Connection: close), and the connection closes cleanly once its body is in', async () => {
    const server = await earlyAnswers();
    const res = await post(server.port, 8 * MB, (socket) => sendBody(socket, 8 * MB));
    await server.close();
    expect(res.answer).toMatch(/^HTTP\/1\.1 413 .*\r\n(.*\r\n)*Connection: close\r\n(.*\r\n)*\r\ntoo large$/i);
    expect(res.closed).toBe('end');
    expect(server.read.bytes).toBe(8 * MB);
  });

  it('a client sending without end is cut once limits.bytes more were read, after it had the answer', async () => {
    const server = await earlyAnswers({ bytes: 2 * MB, ms: 30_000 });
    const res = await post(server.port, 1024 * MB, (socket) => sendBody(socket, Infinity));
    await server.close();
    expect(res.answer).toMatch(/^HTTP\/1\.1 413 [^]*too large$/);
    // Between the limit and the close, what had already arrived is read on for a moment.
    expect(server.read.bytes).toBeGreaterThan(2 * MB);
    expect(server.read.bytes).toBeLessThan(4 * MB);
  });

  it('a client that stops sending mid-body is closed after limits.ms', async () => {
    const server = await earlyAnswers({ bytes: 16 * MB, ms: 300 });
    const res = await post(server.port, MB, (socket) => sendBody(socket, 1024));
    await server.close();
    expect(res.answer).toMatch(/^HTTP\/1\.1 413 [^]*too large$/);
    expect(res.closed).toBe('end');
    expect(res.ms).toBeGreaterThanOrEqual(290);
    expect(res.ms).toBeLessThan(3_000);
    expect(server.read.bytes).toBe(1024);
  });
});
