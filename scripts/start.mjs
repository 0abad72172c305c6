// `npm start`: install, build, check infrastructure, then run every service and the gateway on :8080.
// Each service creates its own database when missing and migrates it at start.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { build, checkInfra, devSecrets, ensureInstalled, profileArgs, root } from './lib.mjs';
import { grpcBasePort, listenersOf, MESSAGING_HTTP_OFFSET, portsTaken, SERVICES, takenPortsMessage } from './ports.mjs';
import { createSupervisor } from './supervisor.mjs';

ensureInstalled();
build();
const infra = await checkInfra();
const secrets = devSecrets();

const present = new Set(readdirSync(path.join(root, 'services')));
let basePort;
try {
  basePort = grpcBasePort();
} catch (err) {
  console.error(`✗ ${err.message}`);
  process.exit(1);
}
const services = SERVICES.filter((s) => present.has(s.name) && existsSync(path.join(root, 'services', s.name, 'dist', 'main.js'))).map((s) => ({
  ...s,
  port: basePort + s.offset,
}));
const gatewayPort = process.env.PORT ?? '8080';
const messagingHttpPort = basePort + MESSAGING_HTTP_OFFSET;

// Every port the processes will listen on must be free before any starts: a taken one would only show as a service
// restarted again and again, and a readiness wait that runs out.
const taken = await portsTaken(listenersOf(services, basePort));
if (taken.length > 0) {
  for (const line of takenPortsMessage(taken, basePort)) console.error(line);
  process.exit(1);
}

/** The service's own database on the server of `server` (a URL). */
function databaseUrl(name, server = infra.postgres) {
  const u = new URL(server);
  u.pathname = `/crm_${name.replace(/-/g, '_')}`;
  return u.toString();
}

/**
 * With DATABASE_URL at a PgBouncer, DATABASE_DIRECT_URL names the PostgreSQL server behind it: each service gets its
 * own database there too (passed on as is, every service would LISTEN and migrate in the one database it names).
 */
function directDatabaseEnv(name) {
  return process.env.DATABASE_DIRECT_URL ? { DATABASE_DIRECT_URL: databaseUrl(name, process.env.DATABASE_DIRECT_URL) } : {};
}

const common = {
  NODE_ENV: process.env.NODE_ENV ?? 'development',
  REDIS_URL: infra.redis,
  AMQP_URL: infra.rabbitmq,
  ...secrets,
  ...Object.fromEntries(services.map((s) => [s.addr, `127.0.0.1:${s.port}`])),
  // The gateway and the connector fetch attachment bytes from messaging's listener.
  MESSAGING_HTTP_URL: `http://127.0.0.1:${messagingHttpPort}`,
};

const supervisor = createSupervisor();
const launch = (name, env) =>
  supervisor.launch(name, process.execPath, [...profileArgs(name), path.join(root, 'services', name, 'dist', 'main.js')], {
    cwd: root,
    env: { ...process.env, ...common, ...env },
  });

function shutdown(code = 0) {
  if (supervisor.stopping) return;
  supervisor.stop().then(() => process.exit(code));
}
process.on('SIGINT', () => shutdown(0));
process.on('SIGTERM', () => shutdown(0));

console.log(`› Starting ${services.map((s) => s.name).join(', ')} and the gateway…`);
for (const s of services) {
  const http = s.name === 'messaging' ? { HTTP_PORT: String(messagingHttpPort) } : {};
  launch(s.name, { DATABASE_URL: databaseUrl(s.name), ...directDatabaseEnv(s.name), GRPC_PORT: String(s.port), ...http });
}
launch('gateway', { PORT: gatewayPort, SERVICES: services.map((s) => s.name).join(',') });

// Ready when the gateway's /readyz says every service answers.
const deadline = Date.now() + 90_000;
for (;;) {
  if (supervisor.stopping) break;
  try {
    const res = await fetch(`http://127.0.0.1:${gatewayPort}/readyz`);
    if (res.ok) {
      console.log(`\n✓ Messaging CRM is up: gateway on http://localhost:${gatewayPort} (services: ${services.map((s) => s.name).join(', ')}).`);
      console.log(
        `  First run? POST http://localhost:${gatewayPort}/api/v1/setup, or open http://localhost:${gatewayPort}/settings/dev/api. Ctrl+C stops everything.\n`,
      );
      break;
    }
  } catch {
    /* not listening yet */
  }
  if (Date.now() > deadline) {
    console.error('✗ Services did not become ready within 90 s; see the logs above.');
    shutdown(1);
    break;
  }
  await new Promise((r) => setTimeout(r, 500));
}
