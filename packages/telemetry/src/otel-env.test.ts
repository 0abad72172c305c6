import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

// The standard OTEL_* environment configures the exporting SDK: checked against a local OTLP/HTTP (JSON) receiver.
// Each case is a process of its own (the OTLP exporter loads its HTTP agent with a dynamic import, which jest's
// module sandbox refuses) running the built package: it starts tracing as service `crm`, ends one root span, and
// exits after stopTelemetry has flushed, so once it has exited every exported span has arrived.

const PACKAGE = path.resolve(__dirname, '..');
const CHILD = `
const { trace, propagation, ROOT_CONTEXT } = require('@opentelemetry/api');
const { startTelemetry, stopTelemetry } = require('./dist');
const exporting = startTelemetry('crm');
const span = trace.getTracer('t').startSpan(process.argv[1], {}, ROOT_CONTEXT);
const carrier = {};
propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
const recording = span.isRecording();
span.end();
stopTelemetry().then(() => process.stdout.write(JSON.stringify({ exporting, recording, traceparent: carrier.traceparent })));
`;

interface Received {
  name: string;
  traceId: string;
  resource: Record<string, string>;
}

const received: Received[] = [];
let receiver: http.Server;
let endpoint = '';

/** Run one span named `name` in a process whose OTEL_* environment is exactly `env`. */
async function oneSpan(name: string, env: Record<string, string>): Promise<{ exporting: boolean; recording: boolean; traceparent: string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', CHILD, name], { cwd: PACKAGE, env: { ...inherited, ...env } });
  return JSON.parse(stdout);
}

/** Export to the local receiver, in JSON (the SDK's default protocol is http/protobuf), plus `env`. */
const exportWith = (env: Record<string, string> = {}) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  ...env,
});

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const payload = JSON.parse(body) as {
        resourceSpans?: Array<{
          resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
          scopeSpans?: Array<{ spans?: Array<{ name: string; traceId: string }> }>;
        }>;
      };
      for (const rs of payload.resourceSpans ?? []) {
        const resource = Object.fromEntries(rs.resource.attributes.map((a) => [a.key, a.value.stringValue ?? '']));
        for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) received.push({ name: s.name, traceId: s.traceId, resource });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((r) => receiver.close(r)));

beforeEach(() => {
  received.length = 0;
});

const SAMPLED_ROOT = /^00-(?!0{32})[0-9a-f]{32}-[0-9a-f]{16}-01$/;
const traceIdOf = (traceparent: string) => traceparent.split('-')[1];

describe('OTEL_* environment', () => {
  it("service.name is the process's name unless OTEL_SERVICE_NAME says otherwise; OTEL_RESOURCE_ATTRIBUTES are added", async () => {
    const attributes = { OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=staging,team=inbox' };
    const first = await oneSpan('default-name', exportWith(attributes));
    const second = await oneSpan('named', exportWith({ ...attributes, OTEL_SERVICE_NAME: 'crm-eu-1' }));
    expect([first.exporting, first.recording]).toEqual([true, true]);

    expect(received.map((s) => s.name).sort()).toEqual(['default-name', 'named']);
    const byName = (n: string) => received.find((s) => s.name === n);
    expect(byName('default-name')).toMatchObject({
      traceId: traceIdOf(first.traceparent),
      resource: { 'service.name': 'crm', 'deployment.environment.name': 'staging', team: 'inbox' },
    });
    expect(byName('named')).toMatchObject({ traceId: traceIdOf(second.traceparent), resource: { 'service.name': 'crm-eu-1', team: 'inbox' } });
  });

  it('a service.name in OTEL_RESOURCE_ATTRIBUTES wins over the default name', async () => {
    await oneSpan('s', exportWith({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=crm-from-attributes' }));
    expect(received.map((s) => s.resource['service.name'])).toEqual(['crm-from-attributes']);
  });

  it('OTEL_TRACES_SAMPLER=always_off: the span keeps its ids (context propagates, unsampled) and nothing is exported', async () => {
    const off = await oneSpan('off', exportWith({ OTEL_TRACES_SAMPLER: 'always_off' }));
    expect(off).toMatchObject({ exporting: true, recording: false });
    expect(off.traceparent).toMatch(/^00-(?!0{32})[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    // The same receiver, with a sampler that keeps everything: the absence of `off` is the sampler's doing.
    await oneSpan('kept', exportWith({ OTEL_TRACES_SAMPLER: 'always_on' }));
    expect(received.map((s) => s.name)).toEqual(['kept']);
  });

  it('OTEL_TRACES_SAMPLER_ARG is read: traceidratio 0 exports nothing, 1 everything', async () => {
    await oneSpan('never', exportWith({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }));
    await oneSpan('always', exportWith({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' }));
    expect(received.map((s) => s.name)).toEqual(['always']);
  });

  it('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT alone turns export on (the full URL, as the spec defines it)', async () => {
    await oneSpan('traces-endpoint', {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/v1/traces`,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
    });
    expect(received.map((s) => s.name)).toEqual(['traces-endpoint']);
  });

  it('OTEL_TRACES_EXPORTER=none exports nothing although an endpoint is set: id-only spans, whose ids still propagate', async () => {
    const none = await oneSpan('none', exportWith({ OTEL_TRACES_EXPORTER: 'none' }));
    expect(none).toMatchObject({ exporting: false, recording: false });
    expect(none.traceparent).toMatch(SAMPLED_ROOT);
    await oneSpan('control', exportWith());
    expect(received.map((s) => s.name)).toEqual(['control']);
  });

  it('nothing set: no export (the SDK alone would send to localhost:4318); OTEL_TRACES_EXPORTER=otlp asks for it', async () => {
    const unset = await oneSpan('unset', {});
    expect(unset).toMatchObject({ exporting: false, recording: false });
    expect(unset.traceparent).toMatch(SAMPLED_ROOT);
    // An explicit exporter with only the traces protocol and endpoint variables set.
    const explicit = await oneSpan('explicit', {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/v1/traces`,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
    });
    expect(explicit.exporting).toBe(true);
    expect(received.map((s) => s.name)).toEqual(['explicit']);
  });

  it('an exporter the SDK does not know leaves no tracer of its own: the id-only one keeps ids propagating', async () => {
    const unknown = await oneSpan('unknown', exportWith({ OTEL_TRACES_EXPORTER: 'carrier-pigeon' }));
    expect(unknown).toMatchObject({ exporting: false, recording: false });
    expect(unknown.traceparent).toMatch(SAMPLED_ROOT);
  });
});
