import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  clearRedisPrefix,
  createTestDatabase,
  deleteRabbitPrefix,
  eventually,
  freePort,
  infra,
  internalAuthSeed,
  TestDatabase,
  uniqueName,
} from '@crm/testing';

// OpenTelemetry: with OTEL_EXPORTER_OTLP_ENDPOINT set, one request through the gateway produces spans in
// the gateway and in identity that share one trace id (context travels in gRPC metadata).
describe('tracing across gateway → identity', () => {
  const root = path.resolve(__dirname, '../..');
  const spans: { service: string; traceId: string; name: string }[] = [];
  let collector: http.Server;
  let db: TestDatabase;
  const procs: ChildProcess[] = [];
  const prefix = `${uniqueName('t')}:`;
  const exchange = uniqueName('t_events');

  beforeAll(async () => {
    // A minimal OTLP/HTTP (JSON) trace receiver.
    collector = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        try {
          const payload = JSON.parse(body);
          for (const rs of payload.resourceSpans ?? []) {
            const service = rs.resource.attributes.find((a: { key: string }) => a.key === 'service.name')?.value.stringValue;
            for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) spans.push({ service, traceId: s.traceId, name: s.name });
          }
        } catch {
          /* protobuf or other payloads are ignored */
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
    db = await createTestDatabase('identity');
  });

  afterAll(async () => {
    for (const p of procs) p.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    collector.close();
    await db.drop();
    await clearRedisPrefix(prefix);
    await deleteRabbitPrefix(infra.amqpUrl, exchange);
  });

  function launch(service: string, env: Record<string, string>, readyText: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const p = spawn(process.execPath, [path.join(root, 'services', service, 'dist', 'main.js')], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      procs.push(p);
      let out = '';
      p.stdout!.on('data', (d) => {
        out += d;
        if (out.includes(readyText)) resolve();
      });
      p.stderr!.on('data', (d) => (out += d));
      p.on('exit', (code) => reject(new Error(`${service} exited ${code}: ${out}`)));
    });
  }

  it('spans of one request share a trace id in both services', async () => {
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    const grpcPort = await freePort();
    const httpPort = await freePort();
    const common = {
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      // The receiver above reads JSON; the SDK's default protocol is http/protobuf (the collector takes both).
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '200',
      JWT_SECRET: randomBytes(32).toString('hex'),
      INTERNAL_AUTH_SEED: internalAuthSeed,
      REDIS_PREFIX: prefix,
      EVENTS_EXCHANGE: exchange,
      LOG_LEVEL: 'info',
      SIGNUP_ENABLED: 'true',
      METRICS_PORT: '0',
    };
    // Both processes use the run's own exchange: identity consumes audit events, the gateway realtime ones.
    await launch('identity', { ...common, DATABASE_URL: db.url, GRPC_PORT: String(grpcPort) }, 'identity listening');
    await launch('gateway', { ...common, PORT: String(httpPort), IDENTITY_ADDR: `127.0.0.1:${grpcPort}` }, 'gateway listening');

    const res = await fetch(`http://127.0.0.1:${httpPort}/api/v1/setup/status`);
    expect(res.status).toBe(200);

    const shared = await eventually(async () => {
      const inIdentity = spans.filter((s) => s.service === 'identity' && /GetSetupStatus/.test(s.name));
      return inIdentity.find((s) => spans.some((g) => g.service === 'gateway' && g.traceId === s.traceId));
    }, 15_000);
    expect(shared.traceId).toMatch(/^[0-9a-f]{32}$/);
  });
});
