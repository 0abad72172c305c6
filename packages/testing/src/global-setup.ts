import net from 'node:net';
import { dockerEngine, type ServerContainer, startServerContainer } from './containers';
import { SERVERS } from './infra-plan';
import { dropStaleTemplates, dropTemplates, newTestRunId } from './templates';

/**
 * jest globalSetup: tests use PostgreSQL, RabbitMQ and Redis from DATABASE_URL / AMQP_URL / REDIS_URL, or the
 * local defaults. When one is neither configured nor reachable and a Docker engine is present, it is started
 * with testcontainers for the run (and stopped by globalTeardown). Workers inherit the URLs set here.
 */
const started: ServerContainer[] = [];

function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.setTimeout(1500, () => (s.destroy(), resolve(false)));
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

export async function setup(): Promise<void> {
  for (const server of SERVERS) {
    if (process.env[server.envVar]) continue;
    if (await reachable(server.defaultPort)) continue;
    const docker = await dockerEngine();
    if (!docker.available) {
      throw new Error(
        `${server.envVar} is not set, nothing answers on 127.0.0.1:${server.defaultPort}, and there is no Docker engine for testcontainers (${docker.reason})`,
      );
    }
    const container = await startServerContainer(server.key);
    started.push(container);
    process.env[server.envVar] = container.url;
  }
  (globalThis as { __crmContainers?: typeof started }).__crmContainers = started;
  // Names this run's migrated template databases (createMigratedDatabase); the workers inherit it. Templates a killed
  // run left behind (older than any run lasts) go first.
  process.env.TEST_RUN_ID ??= newTestRunId();
  await dropStaleTemplates(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 6 * 3_600_000).catch(() => undefined);
}

export async function teardown(): Promise<void> {
  if (process.env.TEST_RUN_ID)
    await dropTemplates(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', process.env.TEST_RUN_ID).catch(() => undefined);
  const list = (globalThis as { __crmContainers?: typeof started }).__crmContainers ?? [];
  await Promise.all(list.map((c) => c.stop()));
}
