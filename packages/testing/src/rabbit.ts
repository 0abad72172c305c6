import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Queues deleted at once (a channel each: a failed delete closes its channel). */
const PARALLEL_DELETES = 8;

/**
 * Remove every queue whose name starts with `prefix` and the exchange itself, so tests leave nothing on
 * the shared broker. `queues` names them when the caller knows (services run in this process: @crm/events'
 * declaredQueues); otherwise they are listed with rabbitmqctl (present wherever the broker runs locally, but it
 * boots an Erlang node: a second of CPU per call), and without it only the exchange is removed.
 */
export async function deleteRabbitPrefix(amqpUrl: string, exchange: string, prefix = exchange, queues?: string[]): Promise<void> {
  const amqp = await import('amqplib');
  let names: string[] = queues?.filter((n) => n.startsWith(prefix)) ?? [];
  if (!queues) {
    try {
      const { stdout } = await run('rabbitmqctl', ['list_queues', '-q', '--no-table-headers', 'name'], { timeout: 15_000 });
      names = stdout
        .split('\n')
        .map((l) => l.trim())
        .filter((n) => n.startsWith(prefix));
    } catch {
      /* no rabbitmqctl here: leave queues to the broker */
    }
  }
  const conn = await amqp.connect(amqpUrl);
  try {
    const deleteOne = async (name: string) => {
      const ch = await conn.createChannel();
      await ch.deleteQueue(name).catch(() => undefined);
      await ch.close().catch(() => undefined);
    };
    const pending = [...names];
    await Promise.all(
      Array.from({ length: Math.min(PARALLEL_DELETES, pending.length) }, async () => {
        for (let name = pending.shift(); name !== undefined; name = pending.shift()) await deleteOne(name);
      }),
    );
    const ch = await conn.createChannel();
    await ch.deleteExchange(exchange).catch(() => undefined);
    await ch.close().catch(() => undefined);
  } finally {
    await conn.close().catch(() => undefined);
  }
}
