import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

// npm start's ports (scripts/ports.mjs): below the range the kernel lends to outgoing connections, and checked free
// before any process starts, so a taken one is named instead of showing as a service restarted again and again.
const ports = path.resolve(__dirname, '../../scripts/ports.mjs');

/** This process's environment without the settings the tests give (a developer's own PORT, say). */
const outside = Object.fromEntries(Object.entries(process.env).filter(([k]) => !['GRPC_BASE_PORT', 'METRICS_PORT', 'PORT', 'HOST'].includes(k)));

/** Runs `code` in a Node ESM process with `p` = scripts/ports.mjs; what it prints as JSON. */
async function probe<T>(code: string, env: Record<string, string | undefined> = {}): Promise<T> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', `import * as p from ${JSON.stringify(ports)};\n${code}`],
    {
      env: { ...outside, ...env },
    },
  );
  return JSON.parse(stdout) as T;
}

interface Listener {
  port: number;
  host: string;
  what: string;
  code?: string;
}

const listenersAtDefaults = `const base = p.grpcBasePort();
  console.log(JSON.stringify(p.listenersOf(p.SERVICES.map((s) => ({ ...s, port: base + s.offset })), base)));`;

describe('npm start ports', () => {
  it("listens below the ports lent to outgoing connections: every service, messaging's attachments, the gateway and metrics", async () => {
    const listeners = await probe<Listener[]>(listenersAtDefaults);
    const names = ['identity', 'crm', 'messaging', 'chatnet-connector', 'automation', 'ai', 'webhooks'];
    expect(listeners.map((l) => l.what)).toEqual(
      expect.arrayContaining([
        ...names.map((n) => `${n}'s gRPC`),
        ...names.map((n) => `${n}'s metrics`),
        "messaging's attachments",
        'the gateway',
        "the gateway's metrics",
      ]),
    );
    expect(listeners.find((l) => l.what === "identity's gRPC")?.port).toBe(15051);
    expect(listeners.find((l) => l.what === "messaging's attachments")?.port).toBe(15063);
    expect(listeners.find((l) => l.what === 'the gateway')).toEqual({ port: 8080, host: '0.0.0.0', what: 'the gateway' });
    expect(new Set(listeners.map((l) => l.port)).size).toBe(listeners.length);
    // This machine's range (Linux); 49152 is where macOS's and Windows' begins.
    const [lowest] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    for (const l of listeners) expect(l.port).toBeLessThan(Math.min(lowest, 49_152));
  });

  it('moves the services with GRPC_BASE_PORT and the gateway with PORT and HOST; leaves metrics out when METRICS_PORT is set', async () => {
    const listeners = await probe<Listener[]>(listenersAtDefaults, {
      GRPC_BASE_PORT: '20000',
      PORT: '3000',
      HOST: '127.0.0.1',
      METRICS_PORT: '9999',
    });
    expect(listeners).toEqual([
      ...['identity', 'crm', 'messaging', 'chatnet-connector', 'automation', 'ai', 'webhooks'].map((n, i) => ({
        port: 20_000 + i,
        host: '127.0.0.1',
        what: `${n}'s gRPC`,
      })),
      { port: 20_012, host: '127.0.0.1', what: "messaging's attachments" },
      { port: 3000, host: '127.0.0.1', what: 'the gateway' },
    ]);
  });

  it.each(['80', '65530', 'abc', '15051.5'])('refuses GRPC_BASE_PORT=%s, naming the setting', async (value) => {
    const out = await probe<{ error: string }>(
      `try { p.grpcBasePort(); console.log('{}'); } catch (e) { console.log(JSON.stringify({ error: e.message })); }`,
      {
        GRPC_BASE_PORT: value,
      },
    );
    expect(out.error).toBe(`GRPC_BASE_PORT must be a whole number from 1024 to 65523 (got "${value}")`);
  });

  it('names a port another program listens on, and only that one, with the hint', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const held = (holder.address() as net.AddressInfo).port;
    const spare = net.createServer();
    await new Promise<void>((resolve) => spare.listen(0, '127.0.0.1', resolve));
    const free = (spare.address() as net.AddressInfo).port;
    await new Promise((resolve) => spare.close(resolve));
    try {
      const out = await probe<{ taken: Listener[]; message: string[] }>(
        `const taken = await p.portsTaken([{ port: ${held}, host: '127.0.0.1', what: "crm's gRPC" }, { port: ${free}, host: '127.0.0.1', what: 'the gateway' }, { port: Number('abc'), host: '0.0.0.0', what: 'the gateway' }]);
         console.log(JSON.stringify({ taken, message: p.takenPortsMessage(taken, 15051) }));`,
      );
      expect(out.taken).toEqual([
        { port: held, host: '127.0.0.1', what: "crm's gRPC", code: 'EADDRINUSE' },
        { port: null, host: '0.0.0.0', what: 'the gateway', code: 'ERR_SOCKET_BAD_PORT' },
      ]);
      expect(out.message[0]).toBe(`✗ Port ${held} (crm's gRPC) cannot be used: another program listens on it.`);
      expect(out.message[2]).toContain('GRPC_BASE_PORT (now 15051)');
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });
});
