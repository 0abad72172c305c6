import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP relay in front of Redis that can hold back the commands of a client while letting its subscriptions flow:
 * with the gate shut, a command connection's bytes are queued (its commands get no reply, as if Redis hung) while a
 * connection that has subscribed keeps receiving messages. Opening the gate sends what was held, in order.
 * It shows which requests of the gateway need a Redis reply: those hang while the gate is shut.
 */
export interface RedisGate {
  url: string;
  shut(): void;
  open(): void;
  /** Command bytes that arrived while the gate was shut (background work included). */
  held(): number;
  close(): Promise<void>;
}

export async function startRedisGate(redisUrl: string): Promise<RedisGate> {
  const target = new URL(redisUrl);
  let shut = false;
  let heldBytes = 0;
  const releases = new Set<() => void>();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    let subscriber = false;
    const queue: Buffer[] = [];
    const release = () => {
      for (const chunk of queue.splice(0)) upstream.write(chunk);
    };
    releases.add(release);
    client.on('data', (chunk: Buffer) => {
      if (!subscriber && /SUBSCRIBE/i.test(chunk.toString('latin1'))) subscriber = true;
      if ((shut && !subscriber) || queue.length) {
        heldBytes += chunk.length;
        queue.push(chunk);
        if (!shut) release();
      } else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = () => {
      releases.delete(release);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: Object.assign(new URL(redisUrl), { hostname: '127.0.0.1', port: String(port) }).toString(),
    shut: () => {
      shut = true;
    },
    open: () => {
      shut = false;
      for (const r of releases) r();
    },
    held: () => heldBytes,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
