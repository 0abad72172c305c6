// bench/gateway/call: what one internal unary call costs each side in CPU on this machine, made as the product makes
// it (grpc-kit's unaryCall on a @grpc/grpc-js channel, to a @grpc/grpc-js server) and with node's http2 module directly
// (gRPC's framing by hand: the least any HTTP/2 call can cost here), with many calls in flight and with one at a time.
// It isolates the transport's fixed per-call cost from the product's own work (`bench/gateway/cpu.mjs --paths`
// measures the gateway around it). The client sends the product's three metadata entries (a credential, a request id,
// a traceparent) and 60 bytes; the server answers 300 at once. Needs the build (npm run build).
// Usage: node bench/gateway/call/run.mjs [--in-flight 50,1] [--seconds 3] [--rounds 3]   (prints, writes nothing)
import { fork } from 'node:child_process';
import http2 from 'node:http2';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { frame, grpc, method, unaryCall } from './wire.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({
  options: { 'in-flight': { type: 'string', default: '50,1' }, seconds: { type: 'string', default: '3' }, rounds: { type: 'string', default: '3' } },
});
const request = Buffer.alloc(60, 1);
const headers = {
  authorization: `Bearer ${'x'.repeat(180)}`,
  'x-request-id': '0b7e6a4c-6d55-4a40-9c55-1f1b0f6e2d11',
  traceparent: '00-0123456789abcdef0123456789abcdef-0123456789abcdef-01',
};

function clientFor(kind, port) {
  if (kind === 'grpc') {
    const Client = grpc.makeGenericClientConstructor({ Get: method });
    const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const channel = client.getChannel();
    return {
      call: () => {
        const md = new grpc.Metadata();
        for (const [k, v] of Object.entries(headers)) md.set(k, v);
        return unaryCall(channel, method, request, md, Date.now() + 5000);
      },
      close: () => client.close(),
    };
  }
  const session = http2.connect(`http://127.0.0.1:${port}`);
  return {
    call: () =>
      new Promise((resolve, reject) => {
        const stream = session.request({
          ':method': 'POST',
          ':path': method.path,
          'content-type': 'application/grpc',
          te: 'trailers',
          'grpc-timeout': '5S',
          ...headers,
        });
        const chunks = [];
        stream.on('data', (c) => chunks.push(c));
        stream.on('trailers', (t) => t['grpc-status'] !== '0' && reject(new Error(`grpc-status ${t['grpc-status']}`)));
        stream.on('end', () => resolve(Buffer.concat(chunks).subarray(5)));
        stream.on('error', reject);
        stream.end(frame(request));
      }),
    close: () => session.close(),
  };
}

async function measure(kind, inFlight) {
  const server = fork(path.join(here, 'server.mjs'), [kind], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await new Promise((resolve) => server.once('message', resolve));
  const serverCpu = () =>
    new Promise((resolve) => {
      server.once('message', (m) => resolve(m.cpu));
      server.send('cpu');
    });
  const client = clientFor(kind, port);
  const loop = async (ms) => {
    let calls = 0;
    const end = Date.now() + ms;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (Date.now() < end) {
          await client.call();
          calls++;
        }
      }),
    );
    return calls;
  };
  await loop(1500); // warm-up: JIT, the connection
  const rounds = [];
  for (let r = 0; r < Number(args.rounds); r++) {
    await serverCpu();
    const before = process.cpuUsage();
    const t0 = performance.now();
    const calls = await loop(Number(args.seconds) * 1000);
    const elapsed = performance.now() - t0;
    const used = process.cpuUsage(before);
    const inServer = await serverCpu();
    rounds.push({ perSecond: (calls / elapsed) * 1000, client: (used.user + used.system) / calls, server: inServer / calls });
  }
  client.close();
  server.kill();
  const median = (f) => rounds.map(f).sort((a, b) => a - b)[Math.floor(rounds.length / 2)];
  return { perSecond: median((r) => r.perSecond), client: median((r) => r.client), server: median((r) => r.server) };
}

console.log(`| calls in flight | transport | calls/s | client µs per call | server µs per call |`);
console.log(`|---|---|---|---|---|`);
for (const inFlight of args['in-flight'].split(',').map(Number)) {
  for (const kind of ['grpc', 'http2']) {
    const m = await measure(kind, inFlight);
    const label = kind === 'grpc' ? 'grpc-kit on @grpc/grpc-js' : 'node:http2, framing by hand';
    console.log(`| ${inFlight} | ${label} | ${m.perSecond.toFixed(0)} | ${m.client.toFixed(0)} | ${m.server.toFixed(0)} |`);
  }
}
