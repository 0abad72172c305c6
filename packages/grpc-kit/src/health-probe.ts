import { checkHealth } from './client';
import { grpcTransportFromEnv } from './transport';

/**
 * `node packages/grpc-kit/dist/health-probe.js [health name]`: exit 0 when this container's gRPC server
 * (127.0.0.1:$GRPC_PORT) answers SERVING, 1 otherwise. Compose's healthchecks and Kubernetes' exec probes run it:
 * with mutual TLS on, a probe must present the process's own certificate, which kubelet's built-in grpc probe cannot.
 */
const service = process.argv[2] ?? '';
checkHealth(`127.0.0.1:${process.env.GRPC_PORT}`, 2000, { transport: grpcTransportFromEnv(process.env), service }).then(
  (ok) => process.exit(ok ? 0 : 1),
  () => process.exit(1),
);
