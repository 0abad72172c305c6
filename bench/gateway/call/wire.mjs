// What both sides of bench/gateway/call share: grpc-kit's own @grpc/grpc-js and its unary call, the one method and
// gRPC's message framing.
import { createRequire } from 'node:module';
import path from 'node:path';
import { root } from '../../lib/processes.mjs';

const fromGrpcKit = createRequire(path.join(root, 'packages', 'grpc-kit', 'package.json'));
export const grpc = fromGrpcKit('@grpc/grpc-js');
/** grpc-kit's own unary call (straight onto the channel, as every service client makes its calls): needs its build. */
export const { unaryCall } = fromGrpcKit('./dist/unary-call.js');

const identity = (b) => b;
/** One unary method whose messages are raw bytes (no protobuf: the transport is what is measured). */
export const method = {
  path: '/bench.Call/Get',
  requestStream: false,
  responseStream: false,
  requestSerialize: identity,
  requestDeserialize: identity,
  responseSerialize: identity,
  responseDeserialize: identity,
};

/** gRPC's length-prefixed message: a compression flag (0), the length, the bytes. */
export function frame(bytes) {
  const out = Buffer.allocUnsafe(5 + bytes.length);
  out[0] = 0;
  out.writeUInt32BE(bytes.length, 1);
  bytes.copy(out, 5);
  return out;
}
