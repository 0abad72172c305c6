import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'amqplib';
import { Client as PgClient } from 'pg';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { createMigratedDatabase, dropStaleTemplates, dropTestDatabases, infra, newTestRunId, runStartedAt } from '@crm/testing';
import { createLogger } from '@crm/logger';
import { dlqName, EventConsumer, retryQueueName } from '@crm/events';
import { startStack } from './stack';
import { nativeRequire } from './native';
import { connectPatiently } from './patient-client';

// The shared servers outlive every run: a stack's stop() must leave nothing behind. Its queues are deleted by the
// names its in-process services declared (no broker-side listing per stop), so this checks, once, that those names
// are all of them.
// The stack's services run the copy of @crm/events loaded by Node's require (native.ts): that copy knows their queues.
const { declaredQueues } = nativeRequire<typeof import('@crm/events')>('@crm/events');

describe('startStack / stop', () => {
  it('removes every queue its services declared, its exchange and its databases', async () => {
    const stack = await startStack({ services: ['webhooks'] });
    const exchange = stack.env.EVENTS_EXCHANGE;
    const queues = declaredQueues(exchange);
    // identity's audit consumer and webhooks' deliveries: each queue with its retry levels and dead-letter queue.
    expect(queues).toEqual(
      expect.arrayContaining([`${exchange}.webhooks.deliveries`, `${exchange}.webhooks.deliveries.dlq`, `${exchange}.identity.audit`]),
    );
    // What the broker holds under the prefix is exactly that (besides queues deleted with their connection), where
    // the broker can be asked here.
    if (existsSync('/usr/sbin/rabbitmqctl') && process.getuid?.() === 0) {
      const held = execFileSync('rabbitmqctl', ['list_queues', '-q', '--no-table-headers', 'name', 'auto_delete'])
        .toString()
        .split('\n')
        .map((line) => line.trim().split(/\s+/))
        .filter(([name, autoDelete]) => name?.startsWith(exchange) && autoDelete !== 'true')
        .map(([name]) => name);
      expect(held.sort()).toEqual([...queues].sort());
    }
    const dbs = [stack.databaseUrl('identity'), stack.databaseUrl('webhooks')].map((u) => new URL(u).pathname.slice(1));
    await stack.stop();

    const conn = await connect(infra.amqpUrl);
    conn.on('error', () => undefined);
    try {
      // A passive check of something missing closes its channel with 404.
      const exists = async (check: (ch: Awaited<ReturnType<typeof conn.createChannel>>) => Promise<unknown>) => {
        const ch = await conn.createChannel();
        ch.on('error', () => undefined);
        return check(ch).then(
          async () => {
            await ch.close();
            return true;
          },
          () => false,
        );
      };
      for (const q of queues) expect([q, await exists((ch) => ch.checkQueue(q))]).toEqual([q, false]);
      expect(await exists((ch) => ch.checkExchange(exchange))).toBe(false);
    } finally {
      await conn.close().catch(() => undefined);
    }
    const admin = await connectPatiently(infra.databaseUrl);
    try {
      const { rows } = await admin.query('SELECT datname FROM pg_database WHERE datname = ANY ($1)', [dbs]);
      expect(rows).toEqual([]);
    } finally {
      await admin.end();
    }
  });

  // A file may declare a durable queue on the stack's exchange itself (standing for an earlier version's queue): it
  // does so with jest's copy of @crm/events, which the services' shared copy does not know of. Left behind once, by
  // tests/gateway/realtime.test.ts: its retry and dead-letter queues.
  it('removes the queues the test file declared itself on its exchange, with their retry and dead-letter queues', async () => {
    const stack = await startStack();
    const queue = `${stack.env.EVENTS_EXCHANGE}.earlier.version`;
    const earlier = new EventConsumer({
      amqpUrl: infra.amqpUrl,
      exchange: stack.env.EVENTS_EXCHANGE,
      queue,
      bindings: ['notification.created'],
      logger: createLogger('stack-test', 'silent'),
      maxAttempts: 2,
      batchSize: 10,
      batchHandler: async () => undefined,
    });
    await earlier.start();
    await earlier.stop();
    expect(declaredQueues(stack.env.EVENTS_EXCHANGE)).not.toContain(queue);
    await stack.stop();

    const left: string[] = [];
    const conn = await connect(infra.amqpUrl);
    conn.on('error', () => undefined);
    try {
      for (const q of [queue, retryQueueName(queue, 1), dlqName(queue)]) {
        const ch = await conn.createChannel();
        ch.on('error', () => undefined);
        // A passive check of a missing queue closes its channel with 404; one still there is removed after all.
        const held = await ch.checkQueue(q).then(
          () => true,
          () => false,
        );
        if (held) {
          left.push(q);
          await ch.deleteQueue(q);
        }
      }
    } finally {
      await conn.close().catch(() => undefined);
    }
    expect(left).toEqual([]);
  });

  it('createMigratedDatabase: a copy with every migration of the service applied, independent of the other copies', async () => {
    const dir = path.join(__dirname, '..', '..', 'services', 'webhooks', 'migrations');
    const [a, b] = await Promise.all([createMigratedDatabase('webhooks', dir), createMigratedDatabase('webhooks', dir)]);
    const clients = [new PgClient({ connectionString: a.url }), new PgClient({ connectionString: b.url })];
    try {
      await Promise.all(clients.map((c) => c.connect()));
      const applied = (await clients[0].query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name')).rows.map((r) => r.name);
      expect(applied).toEqual(
        readdirSync(dir)
          .filter((f) => f.endsWith('.sql'))
          .sort(),
      );
      await clients[0].query(
        `INSERT INTO webhook_settings (id, org_id, url, events, secret_enc) VALUES (gen_random_uuid(), gen_random_uuid(), 'http://x', '{}', 's')`,
      );
      expect((await clients[1].query('SELECT count(*)::int AS n FROM webhook_settings')).rows[0].n).toBe(0);
    } finally {
      await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
      await Promise.all([a.drop(), b.drop()]);
    }
  });

  it('dropTestDatabases drops every database it is given, even past one it cannot drop, and then says which failed', async () => {
    const dir = path.join(__dirname, '..', '..', 'services', 'webhooks', 'migrations');
    const [a, b] = [await createMigratedDatabase('webhooks', dir), await createMigratedDatabase('webhooks', dir)];
    // A held connection does not stop it (WITH FORCE, as a stack's own drop); a name that is not one stops only itself.
    const holder = new PgClient({ connectionString: a.url });
    await holder.connect();
    holder.on('error', () => undefined);
    await expect(dropTestDatabases([a, { url: a.url, name: 'not a name"', drop: async () => undefined }, b])).rejects.toThrow(
      /must be letters, digits and _/,
    );
    await holder.end().catch(() => undefined);
    const admin = await connectPatiently(infra.databaseUrl);
    try {
      const { rows } = await admin.query('SELECT datname FROM pg_database WHERE datname = ANY ($1)', [[a.name, b.name]]);
      expect(rows).toEqual([]);
    } finally {
      await admin.end();
    }
  });

  it("a run's templates carry its start time; those of a run older than six hours (killed before its teardown) are dropped", async () => {
    const now = Date.now();
    expect(runStartedAt(newTestRunId(now))).toBe(now);
    expect(runStartedAt('not-a-run-id')).toBeUndefined();
    const old = `t_tpl_${newTestRunId(now - 7 * 3_600_000)}_webhooks_0123456789`;
    const fresh = `t_tpl_${newTestRunId(now - 3_600_000)}_webhooks_0123456789`;
    const admin = await connectPatiently(infra.databaseUrl);
    try {
      for (const name of [old, fresh]) await admin.query(`CREATE DATABASE "${name}"`);
      const dropped = await dropStaleTemplates(infra.databaseUrl, 6 * 3_600_000, now);
      expect(dropped).toContain(old);
      expect(dropped).not.toContain(fresh);
      const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname = ANY ($1)', [[old, fresh]]);
      expect(rows.map((r) => r.datname)).toEqual([fresh]);
    } finally {
      await admin.end();
      for (const name of [old, fresh]) await dropDb(name);
    }
  });
});

async function dropDb(name: string): Promise<void> {
  const admin = await connectPatiently(infra.databaseUrl);
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
