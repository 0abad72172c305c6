import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Remove every queue whose name starts with `prefix` and the exchange itself, so tests leave nothing on
 * the shared broker. Queue names are listed with rabbitmqctl (present wherever the broker runs locally);
 * without it only the exchange is removed.
 */
export async function deleteRabbitPrefix(amqpUrl: string, exchange: string, prefix = exchange): Promise<void> {
  const amqp = await import('amqplib');
  let names: string[] = [];
  try {
    const { stdout } = await run('rabbitmqctl', ['list_queues', '-q', '--no-table-headers', 'name'], { timeout: 15_000 });
    names = stdout.split('\n').map((l) => l.trim()).filter((n) => n.startsWith(prefix));
  } catch {
    /* no rabbitmqctl here: leave queues to the broker */
  }
  const conn = await amqp.connect(amqpUrl);
  try {
    for (const name of names) {
      const ch = await conn.createChannel();
      await ch.deleteQueue(name).catch(() => undefined);
      await ch.close().catch(() => undefined);
    }
    const ch = await conn.createChannel();
    await ch.deleteExchange(exchange).catch(() => undefined);
    await ch.close().catch(() => undefined);
  } finally {
    await conn.close().catch(() => undefined);
  }
}
