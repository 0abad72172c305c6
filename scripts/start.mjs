// `npm start`: install, build, check infrastructure, then run every service and the gateway on :8080.
// Each service creates its own database when missing and migrates it at start.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { build, checkInfra, devSecrets, ensureInstalled, root } from './lib.mjs';
import { createSupervisor } from './supervisor.mjs';

/** Every backend service with its default gRPC port and the variable the others find it by. */
const SERVICES = [
  { name: 'identity', port: 50051, addr: 'IDENTITY_ADDR' },
  { name: 'crm', port: 50052, addr: 'CRM_ADDR' },
  { name: 'messaging', port: 50053, addr: 'MESSAGING_ADDR' },
  { name: 'chatnet-connector', port: 50054, addr: 'CONNECTOR_ADDR' },
  { name: 'automation', port: 50055, addr: 'AUTOMATION_ADDR' },
  { name: 'ai', port: 50056, addr: 'AI_ADDR' },
  { name: 'webhooks', port: 50057, addr: 'WEBHOOKS_ADDR' },
];

ensureInstalled();
build();
const infra = await checkInfra();
const secrets = devSecrets();

const present = new Set(readdirSync(path.join(root, 'services')));
const services = SERVICES.filter((s) => present.has(s.name) && existsSync(path.join(root, 'services', s.name, 'dist', 'main.js')));
const gatewayPort = process.env.PORT ?? '8080';

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
};

const supervisor = createSupervisor();
const launch = (name, env) =>
  supervisor.launch(name, process.execPath, [path.join(root, 'services', name, 'dist', 'main.js')], {
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
for (const s of services) launch(s.name, { DATABASE_URL: databaseUrl(s.name), ...directDatabaseEnv(s.name), GRPC_PORT: String(s.port) });
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
