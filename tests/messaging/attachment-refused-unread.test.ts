import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { messagingWithFakes } from './support';

const MB = 1024 * 1024;
/** Far past what grpc-kit's lingering close reads after an answer (16 MB) plus what the sockets hold in flight. */
const BODY_BYTES = 64 * MB;

/**
 * One raw HTTP/1.1 request: the head, then `bodyBytes` of body written as fast as the gateway takes them, until it has
 * all gone or the gateway closed the connection. What came back (head and body as text) and how much of the body went.
 */
function send(port: number, head: string, bodyBytes: number): Promise<{ answer: string; sent: number; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunk = Buffer.alloc(64 * 1024, 7);
    let answer = '';
    let sent = 0;
    let closedByServer = false;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ answer, sent, closedByServer });
    };
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.on('end', () => {
      closedByServer = true;
      finish();
    });
    socket.on('error', () => {
      closedByServer = true;
      finish();
    });
    // A server that keeps the connection open (and reads on) is not waited for past the whole body and a moment.
    const pump = () => {
      while (!done && sent < bodyBytes) {
        sent += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
      if (!done) setTimeout(finish, 2_000);
    };
    socket.once('connect', () => {
      socket.write(head);
      pump();
    });
  });
}

// A request the gateway refuses before reading its body (here a 401 on an upload, which is streamed, never parsed)
// is answered, and then the connection reads at most grpc-kit's linger bounds of the rest and closes: Node used to
// keep it open and read the whole body, however large, to reuse the connection. Requests without a body keep alive.
describe('chat attachments: an upload refused before its body is read', () => {
  let fakes: Awaited<ReturnType<typeof messagingWithFakes>>;
  let port: number;
  const dir = mkdtempSync(path.join(tmpdir(), 'msg-refused-'));

  beforeAll(async () => {
    fakes = await messagingWithFakes({ ATTACHMENTS_DIR: dir });
    port = Number(new URL(fakes.stack.url).port);
  }, 60_000);
  afterAll(async () => {
    await fakes?.down();
    rmSync(dir, { recursive: true, force: true });
  });

  it('401 with Connection: close, and the connection closes long before a 64 MB body is all sent', async () => {
    const head = [
      'POST /api/v1/chat/attachments HTTP/1.1',
      'Host: 127.0.0.1',
      'Authorization: Bearer not-a-token',
      'Content-Type: multipart/form-data; boundary=x',
      `Content-Length: ${BODY_BYTES}`,
      '',
      '',
    ].join('\r\n');
    const { answer, sent, closedByServer } = await send(port, head, BODY_BYTES);

    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).toContain('"code":"invalid_token"');
    expect(closedByServer).toBe(true);
    expect(sent).toBeLessThan(BODY_BYTES / 2);
  }, 30_000);

  it('a refused request without a body keeps its connection (no Connection: close)', async () => {
    const head = ['GET /api/v1/chat/attachments/nope HTTP/1.1', 'Host: 127.0.0.1', 'Authorization: Bearer not-a-token', '', ''].join('\r\n');
    const { answer, closedByServer } = await send(port, head, 0);

    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer).not.toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).toMatch(/\r\nconnection: keep-alive\r\n/i);
    expect(closedByServer).toBe(false);
  }, 30_000);
});
