import { randomBytes } from 'node:crypto';
import { createLogger } from '@crm/logger';
import { clearRedisPrefix, createTestDatabase, infra, TestDatabase, uniqueName } from '@crm/testing';
import * as gateway from '@crm/gateway';
import * as identity from '@crm/identity';

/**
 * A whole stack for one test file: each service started in-process on a free port with its own fresh
 * database, one Redis prefix, one RabbitMQ exchange, and the gateway in front. Everything it creates
 * is removed by stop(), because the shared servers outlive the run.
 */
export interface Stack {
  url: string;
  env: Record<string, string>;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Extra environment for every service (e.g. SIGNUP_ENABLED). */
  env?: Record<string, string>;
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const log = createLogger('test', process.env.TEST_LOG_LEVEL ?? 'silent');
  const prefix = `${uniqueName('t')}:`;
  const shared: Record<string, string> = {
    NODE_ENV: 'test',
    REDIS_URL: infra.redisUrl,
    AMQP_URL: infra.amqpUrl,
    REDIS_PREFIX: prefix,
    EVENTS_EXCHANGE: uniqueName('t_events'),
    JWT_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    GRPC_HOST: '127.0.0.1',
    GRPC_PORT: '0',
    LOG_LEVEL: 'silent',
    ...opts.env,
  };
  const databases: TestDatabase[] = [];
  const stops: (() => Promise<void>)[] = [];

  const idDb = await createTestDatabase('identity');
  databases.push(idDb);
  const id = await identity.startIdentity(identity.loadConfig({ ...shared, DATABASE_URL: idDb.url }), log);
  stops.push(id.stop);

  const gwEnv = { ...shared, HOST: '127.0.0.1', PORT: '0', IDENTITY_ADDR: `127.0.0.1:${id.port}`, SERVICES: 'identity' };
  const gw = await gateway.startGateway(gateway.loadConfig(gwEnv), log);
  stops.unshift(gw.stop);

  return {
    url: gw.url,
    env: shared,
    async stop() {
      for (const stop of stops) await stop().catch(() => undefined);
      await Promise.all(databases.map((d) => d.drop().catch(() => undefined)));
      await clearRedisPrefix(prefix).catch(() => undefined);
    },
  };
}
