import { existsSync } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ServiceName, Services } from '@crm/proto-types';
import type { ServiceConstructor } from './typed';

/**
 * One fixed set of loader options for every service and client, so a message decodes the same way
 * everywhere: field names as written, enums as strings, scalars with defaults, and proto3 `optional`
 * fields absent when unset (that is how "only sent fields are updated" crosses the wire).
 */
export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: false,
};

/** The repository's `proto/` folder; `PROTO_DIR` overrides it for unusual layouts. */
export function protoRoot(env: Record<string, string | undefined> = process.env): string {
  if (env.PROTO_DIR) return env.PROTO_DIR;
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'proto');
    if (existsSync(path.join(candidate, 'common'))) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error('Cannot find the proto/ folder; set PROTO_DIR');
}

const cache = new Map<string, grpc.GrpcObject>();

/** Load `proto/<file>` (e.g. `identity/v1/identity.proto`) and return its package object. */
export function loadProto(file: string): grpc.GrpcObject {
  const root = protoRoot();
  const key = path.join(root, file);
  let pkg = cache.get(key);
  if (!pkg) {
    const def = protoLoader.loadSync(key, { ...LOADER_OPTIONS, includeDirs: [root] });
    pkg = grpc.loadPackageDefinition(def);
    cache.set(key, pkg);
  }
  return pkg;
}

/**
 * Look up `identity.v1.IdentityService` in a loaded package. The name is one of the generated `Services`, so the
 * constructor carries that service's types to `GrpcServer.add` and `createServiceClient`.
 */
export function serviceDefinition<N extends ServiceName>(pkg: grpc.GrpcObject, dotted: N): ServiceConstructor<Services[N]> {
  const found = dotted.split('.').reduce<unknown>((obj, part) => (obj as Record<string, unknown>)?.[part], pkg);
  if (typeof found !== 'function') throw new Error(`Service ${dotted} not found in proto`);
  // The loader builds the constructor at run time; the generated types of the same proto describe it.
  return found as ServiceConstructor<Services[N]>;
}
