import { existsSync } from 'node:fs';
import net from 'node:net';

/**
 * jest globalSetup: tests use PostgreSQL, RabbitMQ and Redis from DATABASE_URL / AMQP_URL / REDIS_URL, or the
 * local defaults. When one is neither configured nor reachable and a Docker engine is present, it is started
 * with testcontainers for the run (and stopped by globalTeardown). Workers inherit the URLs set here.
 */
const DEFAULTS = {
  DATABASE_URL: { url: 'postgres://postgres@127.0.0.1:5432/postgres', port: 5432 },
  AMQP_URL: { url: 'amqp://guest:guest@127.0.0.1:5672', port: 5672 },
  REDIS_URL: { url: 'redis://127.0.0.1:6379', port: 6379 },
} as const;

type Var = keyof typeof DEFAULTS;
const started: { stop(): Promise<unknown> }[] = [];

function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.setTimeout(1500, () => (s.destroy(), resolve(false)));
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

function dockerAvailable(): boolean {
  return existsSync('/var/run/docker.sock') || !!process.env.DOCKER_HOST;
}

async function startContainer(name: Var): Promise<string> {
  const { GenericContainer, Wait } = await import('testcontainers');
  switch (name) {
    case 'DATABASE_URL': {
      const c = await new GenericContainer('postgres:15').withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' }).withExposedPorts(5432).withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2)).start();
      started.push(c);
      return `postgres://postgres@${c.getHost()}:${c.getMappedPort(5432)}/postgres`;
    }
    case 'AMQP_URL': {
      const c = await new GenericContainer('rabbitmq:3.10').withExposedPorts(5672).withWaitStrategy(Wait.forLogMessage(/Server startup complete/)).start();
      started.push(c);
      return `amqp://guest:guest@${c.getHost()}:${c.getMappedPort(5672)}`;
    }
    case 'REDIS_URL': {
      const c = await new GenericContainer('redis:7').withExposedPorts(6379).start();
      started.push(c);
      return `redis://${c.getHost()}:${c.getMappedPort(6379)}`;
    }
  }
}

export async function setup(): Promise<void> {
  for (const name of Object.keys(DEFAULTS) as Var[]) {
    if (process.env[name]) continue;
    if (await reachable(DEFAULTS[name].port)) continue;
    if (!dockerAvailable()) {
      throw new Error(`${name} is not set, nothing answers on 127.0.0.1:${DEFAULTS[name].port}, and there is no Docker engine for testcontainers`);
    }
    process.env[name] = await startContainer(name);
  }
  (globalThis as { __crmContainers?: typeof started }).__crmContainers = started;
}

export async function teardown(): Promise<void> {
  const list = (globalThis as { __crmContainers?: typeof started }).__crmContainers ?? [];
  await Promise.all(list.map((c) => c.stop()));
}
