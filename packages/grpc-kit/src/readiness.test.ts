import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { createLogger } from '@crm/logger';
import * as grpc from '@grpc/grpc-js';
import { checkHealth } from './client';
import { devInternalAuth } from './internal-auth';
import { loadProto, serviceDefinition } from './proto';
import { Readiness } from './readiness';
import { GrpcServer, LIVENESS_SERVICE } from './server';

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Resolves when a TCP connection to the port opens, rejects when it is refused: a check of a dependency's port. */
function tcpCheck(port: number): () => Promise<void> {
  return () =>
    new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => (socket.destroy(), resolve()));
      socket.once('error', reject);
    });
}

describe('Readiness', () => {
  it('is ready when every check resolves, and names each failed check with why', async () => {
    const r = new Readiness()
      .add('postgres', async () => undefined)
      .add('rabbitmq', async () => false)
      .add('redis', async () => {
        throw new Error('ECONNREFUSED 127.0.0.1:6379');
      });
    expect(await r.report()).toEqual({ ready: false, failed: { rabbitmq: 'check returned false', redis: 'ECONNREFUSED 127.0.0.1:6379' } });
    expect(await new Readiness().add('postgres', async () => ({ rows: [] })).report()).toEqual({ ready: true, failed: {} });
  });

  it('fails a check that does not answer within the timeout, and does not start it again while it hangs', async () => {
    let calls = 0;
    const r = new Readiness({ timeoutMs: 50, cacheMs: 0 }).add('postgres', () => {
      calls++;
      return new Promise(() => undefined);
    });
    expect(await r.report()).toEqual({ ready: false, failed: { postgres: 'timed out after 50 ms' } });
    expect(await r.report()).toEqual({ ready: false, failed: { postgres: 'timed out after 50 ms' } });
    expect(calls).toBe(1);
  });

  it('answers from its cache within cacheMs and runs the checks again after it', async () => {
    let now = 0;
    let up = true;
    let calls = 0;
    const r = new Readiness({ cacheMs: 1000, now: () => now }).add('redis', async () => {
      calls++;
      if (!up) throw new Error('down');
    });
    expect((await r.report()).ready).toBe(true);
    up = false;
    now = 999;
    expect((await r.report()).ready).toBe(true);
    now = 1000;
    expect((await r.report()).ready).toBe(false);
    expect(calls).toBe(2);
  });

  it('shares one run between concurrent callers', async () => {
    let calls = 0;
    const r = new Readiness().add('postgres', async () => {
      calls++;
      await new Promise((resolve) => setTimeout(resolve, 20));
    });
    await Promise.all([r.report(), r.report(), r.report()]);
    expect(calls).toBe(1);
  });
});

describe('GrpcServer health with readiness checks', () => {
  const auth = devInternalAuth('crm', randomBytes(32).toString('hex'));
  const log = createLogger('test', 'silent');
  let open: net.Server;
  let openPort: number;

  beforeAll(async () => {
    open = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => open.listen(0, '127.0.0.1', resolve));
    openPort = (open.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => open.close(resolve)));

  async function healthOf(server: GrpcServer): Promise<boolean> {
    const port = await server.listen('127.0.0.1', 0);
    try {
      return await checkHealth(`127.0.0.1:${port}`, 3000);
    } finally {
      await server.stop(100);
    }
  }

  it('answers SERVING while every dependency answers', async () => {
    expect(await healthOf(new GrpcServer(log, auth).readiness({ postgres: tcpCheck(openPort), redis: tcpCheck(openPort) }))).toBe(true);
  });

  it('answers NOT_SERVING when one dependency is on a closed port', async () => {
    const closed = await closedPort();
    expect(await healthOf(new GrpcServer(log, auth).readiness({ postgres: tcpCheck(openPort), rabbitmq: tcpCheck(closed) }))).toBe(false);
  });

  it('answers the liveness name SERVING while a dependency fails (a restart would not bring the database back)', async () => {
    const closed = await closedPort();
    const server = new GrpcServer(log, auth).readiness({ postgres: tcpCheck(closed) });
    const port = await server.listen('127.0.0.1', 0);
    const ctor = serviceDefinition(loadProto('grpc/health/v1/health.proto'), 'grpc.health.v1.Health');
    const client = new ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as {
      Check(req: { service: string }, cb: (err: Error | null, res: { status: string }) => void): void;
    };
    const ask = (service: string) =>
      new Promise<string>((resolve, reject) => client.Check({ service }, (err, res) => (err ? reject(err) : resolve(res.status))));
    try {
      expect(await ask(LIVENESS_SERVICE)).toBe('SERVING');
      expect(await ask('')).toBe('NOT_SERVING');
    } finally {
      (client as unknown as grpc.Client).close();
      await server.stop(100);
    }
  });

  it('answers SERVING without checks (a server that depends on nothing)', async () => {
    expect(await healthOf(new GrpcServer(log, auth))).toBe(true);
  });
});
