import * as grpc from '@grpc/grpc-js';
import type { health } from '@crm/proto-types';
import { CallBatcher } from './call-batch';
import { AUTH_METADATA_KEY, CallContext, ORIGIN_METADATA_KEY, REQUEST_ID_METADATA_KEY } from './context';
import type { InternalAuth } from './internal-auth';
import { loadProto, serviceDefinition } from './proto';
import { TRACEPARENT, traceparentOf } from './trace-context';
import { GrpcTransport } from './transport';
import type { CallOptions, ServiceClient, ServiceConstructor } from './typed';

const ROUND_ROBIN = JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] });

/**
 * A client for one service with every unary method promisified. Each call carries the internal credential:
 * `ctx` signed by `auth` for the called service only, and `ctx.traceparent` or the active trace context as `traceparent`. Each call gets a deadline (default 5 s) so a stuck
 * backend turns into a 504 at the gateway instead of a hung request. `transport`: plaintext, or mutual TLS (this
 * process's grpcTransportFromEnv).
 */
export type LbPolicy = 'pick_first' | 'round_robin';

export function createServiceClient<S>(
  ctor: ServiceConstructor<S>,
  address: string,
  auth: InternalAuth,
  defaultDeadlineMs = 5000,
  lbPolicy: LbPolicy = 'pick_first',
  transport: GrpcTransport = GrpcTransport.plaintext,
): ServiceClient<S> {
  const client = new ctor(address, transport.channelCredentials(), {
    'grpc.keepalive_time_ms': 30_000,
    'grpc.max_receive_message_length': 32 * 1024 * 1024,
    // round_robin: one connection per address the name resolves to, calls spread across them: behind a headless
    // Kubernetes Service that is every ready pod (pick_first would send everything to one of them). See
    // GRPC_LB_POLICY in @crm/config for why it is the deployments' choice rather than the default.
    ...(lbPolicy === 'round_robin' ? { 'grpc.service_config': ROUND_ROBIN } : {}),
    ...transport.channelOptions(),
  });
  const out: Record<string, unknown> = { raw: client, close: () => client.close() };
  // Calls made in the same turn of the event loop share one call to the service (call-batch.ts).
  const batcher = new CallBatcher(client.getChannel());
  const metadataFor = (ctx: Partial<CallContext>, method: string): grpc.Metadata => {
    const md = new grpc.Metadata();
    md.set(AUTH_METADATA_KEY, `Bearer ${auth.sign(ctx, method)}`);
    if (ctx.origin) md.set(ORIGIN_METADATA_KEY, ctx.origin);
    if (ctx.requestId) md.set(REQUEST_ID_METADATA_KEY, ctx.requestId);
    // The server span's parent: the trace context the caller passed (the gateway's request), else its active span
    // (a handler, an event being consumed).
    const traceparent = ctx.traceparent ?? traceparentOf();
    if (traceparent) md.set(TRACEPARENT, traceparent);
    return md;
  };
  for (const method of Object.keys(ctor.service)) {
    const def = ctor.service[method];
    // A method's path carries the package (`/crm.v1.CrmService/X`): the credential is for that method only.
    const fullMethod = def.path.slice(1);
    out[method] = (req: object, ctx: Partial<CallContext> = {}, opts: CallOptions = {}) => {
      let md: grpc.Metadata;
      try {
        md = metadataFor(ctx, fullMethod);
      } catch (err) {
        // A value metadata refuses (or a signing failure) rejects the call's promise, as it always did.
        return Promise.reject(err);
      }
      return batcher.call(def, req, md, opts.deadlineMs ?? defaultDeadlineMs);
    };
  }
  // Built method by method from the names the loader found; the generated types of the same proto describe them.
  return out as ServiceClient<S>;
}

type HealthClient = health.HealthClient;

function healthClient(address: string, transport: GrpcTransport): HealthClient {
  const ctor = serviceDefinition(loadProto('grpc/health/v1/health.proto'), 'grpc.health.v1.Health');
  // The health service needs no internal credential (it says only "serving"), so this client sends none; with mutual
  // TLS the connection itself still needs this process's certificate.
  return new ctor(address, transport.channelCredentials(), transport.channelOptions()) as unknown as HealthClient;
}

function check(client: HealthClient, deadlineMs: number, service = ''): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    client.Check(
      { service },
      { deadline: new Date(Date.now() + deadlineMs) },
      (err: grpc.ServiceError | null, r?: health.HealthCheckResponse__Output) => resolve(!err && r?.status === 'SERVING'),
    );
  });
}

/**
 * Ask a server's standard health service once whether it is serving (a new connection each time). `service`: the
 * health name asked (`liveness`: the process alone; empty: with its dependencies).
 */
export function checkHealth(address: string, deadlineMs = 1000, opts: { transport?: GrpcTransport; service?: string } = {}): Promise<boolean> {
  const client = healthClient(address, opts.transport ?? GrpcTransport.plaintext);
  return check(client, deadlineMs, opts.service).finally(() => client.close());
}

/**
 * Health checks that keep one connection per address, for a readiness endpoint asked every few seconds:
 * opening a channel per check (resolve, TCP, HTTP/2 handshake) made a check on a loaded machine miss its
 * deadline and report a healthy service as down.
 */
export class HealthChecker {
  private readonly clients = new Map<string, HealthClient>();

  constructor(
    private readonly transport = GrpcTransport.plaintext,
    private readonly deadlineMs = 2000,
  ) {}

  check(address: string): Promise<boolean> {
    let client = this.clients.get(address);
    if (!client) this.clients.set(address, (client = healthClient(address, this.transport)));
    return check(client, this.deadlineMs);
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}
