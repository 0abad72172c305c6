import type { ServerKey } from './infra-plan';

/**
 * PostgreSQL, RabbitMQ and Redis in Docker containers through testcontainers: for a test run whose servers are not
 * there (jest's globalSetup) and for `npm run dev:containers`. testcontainers is loaded only when asked for, so
 * nothing that merely imports this module pays for it or needs Docker.
 */
// The majors docker-compose.yml deploys (RabbitMQ 4: the durable consumer queues are quorum queues), alpine for size.
export const IMAGES: Record<ServerKey, string> = {
  postgres: 'postgres:15-alpine',
  rabbitmq: 'rabbitmq:4.1-management-alpine',
  redis: 'redis:7-alpine',
};

export interface ServerContainer {
  key: ServerKey;
  /** The URL the services take (DATABASE_URL, AMQP_URL, REDIS_URL), on the port Docker mapped. */
  url: string;
  stop(): Promise<void>;
}

export type DockerEngine = { available: true } | { available: false; reason: string };

/** Whether a container engine answers here (testcontainers' own discovery: DOCKER_HOST, the socket, Podman…), and why not. */
export async function dockerEngine(): Promise<DockerEngine> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return { available: true };
  } catch (err) {
    return { available: false, reason: err instanceof Error ? err.message : String(err) };
  }
}

/** Start one server and wait until it takes connections. */
export async function startServerContainer(key: ServerKey): Promise<ServerContainer> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const base = new GenericContainer(IMAGES[key]);
  switch (key) {
    case 'postgres': {
      // The log line shows twice: once for the init server that runs the setup scripts, once for the real one.
      const c = await base
        .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
        .withExposedPorts(5432)
        .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
        .start();
      return { key, url: `postgres://postgres@${c.getHost()}:${c.getMappedPort(5432)}/postgres`, stop: () => stopQuietly(c) };
    }
    case 'rabbitmq': {
      // Not `guest`: RabbitMQ lets guest in only over loopback, and the host reaches the container through Docker's bridge.
      const c = await base
        .withEnvironment({ RABBITMQ_DEFAULT_USER: 'crm', RABBITMQ_DEFAULT_PASS: 'crm' })
        .withExposedPorts(5672)
        .withWaitStrategy(Wait.forLogMessage(/Server startup complete/))
        .start();
      return { key, url: `amqp://crm:crm@${c.getHost()}:${c.getMappedPort(5672)}`, stop: () => stopQuietly(c) };
    }
    case 'redis': {
      const c = await base
        .withExposedPorts(6379)
        .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
        .start();
      return { key, url: `redis://${c.getHost()}:${c.getMappedPort(6379)}`, stop: () => stopQuietly(c) };
    }
  }
}

/** Stop and remove; a container already gone (the reaper, a manual `docker rm`) is not an error at shutdown. */
async function stopQuietly(container: { stop(opts?: { timeout?: number }): Promise<unknown> }): Promise<void> {
  await container.stop({ timeout: 5_000 }).catch(() => undefined);
}
