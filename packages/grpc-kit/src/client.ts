import * as grpc from '@grpc/grpc-js';
import { CallContext, metadataFromContext } from './context';
import { loadProto, serviceDefinition } from './proto';

export interface CallOptions {
  deadlineMs?: number;
}

/** A promise-returning unary call carrying the caller's context as metadata. */
export type UnaryCall = <Res = any>(req: object, ctx?: Partial<CallContext>, opts?: CallOptions) => Promise<Res>;

export type ServiceClient = Record<string, UnaryCall> & { close(): void; raw: grpc.Client };

/**
 * A client for one service with every unary method promisified. Each call gets a deadline (default
 * 5 s) so a stuck backend turns into a 504 at the gateway instead of a hung request.
 */
export function createServiceClient(ctor: grpc.ServiceClientConstructor, address: string, defaultDeadlineMs = 5000): ServiceClient {
  const client = new ctor(address, grpc.credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 30_000,
    'grpc.max_receive_message_length': 32 * 1024 * 1024,
  });
  const out: Record<string, unknown> = { raw: client, close: () => client.close() };
  for (const method of Object.keys(ctor.service)) {
    const fn = (client as unknown as Record<string, Function>)[method].bind(client);
    out[method] = (req: object, ctx: Partial<CallContext> = {}, opts: CallOptions = {}) =>
      new Promise((resolve, reject) => {
        const deadline = new Date(Date.now() + (opts.deadlineMs ?? defaultDeadlineMs));
        fn(req, metadataFromContext(ctx), { deadline }, (err: grpc.ServiceError | null, res: unknown) => {
          if (err) reject(err);
          else resolve(res);
        });
      });
  }
  return out as ServiceClient;
}

/** Ask a server's standard health service whether it is serving. */
export function checkHealth(address: string, deadlineMs = 1000): Promise<boolean> {
  const ctor = serviceDefinition(loadProto('grpc/health/v1/health.proto'), 'grpc.health.v1.Health');
  const client = createServiceClient(ctor, address, deadlineMs);
  return client
    .Check<{ status: string }>({ service: '' })
    .then((r) => r.status === 'SERVING')
    .catch(() => false)
    .finally(() => client.close());
}
