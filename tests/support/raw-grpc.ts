import * as grpc from '@grpc/grpc-js';
import { loadProto, serviceDefinition, status } from '@crm/grpc-kit';

/** What a service answered a raw call: its gRPC status and the machine code beside it (`x-error-code`, or ''). */
export interface RawAnswer {
  code: number;
  errorCode: string;
}

/**
 * One call to a service with exactly the metadata given, over a plaintext channel: what a process on the internal
 * network can send (a compromised service forging its credential or origin). `service` is the full name, e.g.
 * `crm.v1.CrmService`; its proto is found from it (`crm/v1/crm.proto`) unless `proto` names another file.
 */
export function rawCall(address: string, service: string, method: string, req: object, md: grpc.Metadata, proto?: string): Promise<RawAnswer> {
  const [pkg, version] = service.split('.');
  const ctor = serviceDefinition(loadProto(proto ?? `${pkg}/${version}/${pkg}.proto`), service as Parameters<typeof serviceDefinition>[1]);
  const c = new ctor(address, grpc.credentials.createInsecure()) as unknown as grpc.Client & Record<string, Function>;
  return new Promise((resolve) => {
    c[method](req, md, { deadline: new Date(Date.now() + 5000) }, (err: grpc.ServiceError | null) => {
      c.close();
      resolve({ code: err ? err.code : status.OK, errorCode: String(err?.metadata?.get('x-error-code')[0] ?? '') });
    });
  });
}

/** The metadata a service's client sends: its credential, and the origin it forwards beside it. */
export function callerMetadata(credential: string, origin?: string): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${credential}`);
  if (origin) md.set('x-crm-origin', origin);
  return md;
}
