// The ports `npm start` runs the product on, and a check that they are free before anything starts.
import net from 'node:net';

/**
 * The first of the services' gRPC ports under `npm start` (identity's; the others follow, SERVICES' offsets). The
 * services' own defaults (50051-50057 and 50063, the deploy manifests' ports) lie inside the range Linux lends to
 * outgoing connections (32768-60999; 49152-65535 on macOS and Windows): on a machine where the product and its tests
 * keep hundreds of connections open, one of them sometimes held a service's port at the moment it started, and
 * `npm start`'s readiness wait ran out (bench/npm-start, session 42). A port below that range is never lent out.
 */
export const DEFAULT_GRPC_BASE_PORT = 15051;

/**
 * Every backend service `npm start` runs, with its gRPC port's offset from the base, the variable the others find it
 * by, and its metrics port (the service's default).
 */
export const SERVICES = [
  { name: 'identity', offset: 0, addr: 'IDENTITY_ADDR', metrics: 9465 },
  { name: 'crm', offset: 1, addr: 'CRM_ADDR', metrics: 9466 },
  { name: 'messaging', offset: 2, addr: 'MESSAGING_ADDR', metrics: 9467 },
  { name: 'chatnet-connector', offset: 3, addr: 'CONNECTOR_ADDR', metrics: 9468 },
  { name: 'automation', offset: 4, addr: 'AUTOMATION_ADDR', metrics: 9469 },
  { name: 'ai', offset: 5, addr: 'AI_ADDR', metrics: 9470 },
  { name: 'webhooks', offset: 6, addr: 'WEBHOOKS_ADDR', metrics: 9471 },
];

/** messaging's attachment listener: its gRPC port + 10, as in the services' defaults (50053, 50063). */
export const MESSAGING_HTTP_OFFSET = 12;
const GATEWAY_METRICS_PORT = 9464;

/** GRPC_BASE_PORT from the environment, or the default; a clear error for anything but a port with 12 more after it. */
export function grpcBasePort(env = process.env) {
  const raw = env.GRPC_BASE_PORT;
  if (raw === undefined || raw === '') return DEFAULT_GRPC_BASE_PORT;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1024 || port > 65_535 - MESSAGING_HTTP_OFFSET) {
    throw new Error(`GRPC_BASE_PORT must be a whole number from 1024 to ${65_535 - MESSAGING_HTTP_OFFSET} (got ${JSON.stringify(raw)})`);
  }
  return port;
}

/**
 * Every listener of the processes `npm start` runs ({ port, host, what }): the given services (SERVICES' entries, each
 * with its `port`), messaging's attachments, the gateway on PORT, and the metrics listeners at their defaults (a
 * METRICS_PORT in the environment would go to every process alike, so then they are not known here).
 */
export function listenersOf(services, basePort, env = process.env) {
  const metrics = env.METRICS_PORT
    ? []
    : [
        ...services.map((s) => ({ port: s.metrics, host: '127.0.0.1', what: `${s.name}'s metrics` })),
        { port: GATEWAY_METRICS_PORT, host: '127.0.0.1', what: "the gateway's metrics" },
      ];
  return [
    ...services.map((s) => ({ port: s.port, host: '127.0.0.1', what: `${s.name}'s gRPC` })),
    ...(services.some((s) => s.name === 'messaging')
      ? [{ port: basePort + MESSAGING_HTTP_OFFSET, host: '127.0.0.1', what: "messaging's attachments" }]
      : []),
    { port: Number(env.PORT ?? 8080), host: env.HOST ?? '0.0.0.0', what: 'the gateway' },
    ...metrics,
  ];
}

/**
 * Which of `listeners` cannot be listened on now, each with the reason (EADDRINUSE: another program has it). Each is
 * tried the way its process will bind it, and let go at once.
 */
export async function portsTaken(listeners) {
  const tried = await Promise.all(
    listeners.map(
      (l) =>
        new Promise((resolve) => {
          const server = net.createServer();
          server.once('error', (err) => resolve({ ...l, code: err.code }));
          try {
            server.listen({ port: l.port, host: l.host, exclusive: true }, () => server.close(() => resolve(undefined)));
          } catch (err) {
            resolve({ ...l, code: err.code ?? err.message }); // not a port at all (PORT=abc)
          }
        }),
    ),
  );
  return tried.filter(Boolean);
}

/** What `npm start` says about the taken listeners before it stops, one line each and a hint. */
export function takenPortsMessage(taken, basePort) {
  return [
    ...taken.map((t) => `✗ Port ${t.port} (${t.what}) cannot be used: ${t.code === 'EADDRINUSE' ? 'another program listens on it' : t.code}.`),
    `  Is \`npm start\` already running? Otherwise stop what holds the port, or move the services' gRPC ports with GRPC_BASE_PORT (now ${basePort}) and the gateway with PORT.`,
  ];
}
