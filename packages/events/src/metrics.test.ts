import { eventually } from '@crm/testing';
import { Metrics, sampleValue } from '@crm/metrics';
import { Harness } from './test-support/harness';

let h: Harness;
beforeEach(async () => {
  h = await Harness.create();
});
afterEach(async () => {
  await h.close();
});

const sample = async (metrics: Metrics, name: string, labels: Record<string, string> = {}) => sampleValue(await metrics.scrape(), name, labels);

test('confirmed publishes are counted by event type, and the drained outbox reads as empty', async () => {
  const metrics = new Metrics('events-test', { processMetrics: false });
  await h.emit('widget.created');
  await h.emit('widget.created');
  await h.emit('ping.received');
  await h.relay({ metrics });
  await eventually(async () => (await sample(metrics, 'outbox_backlog_rows')) === 0);
  expect(await sample(metrics, 'outbox_oldest_unsent_age_seconds')).toBe(0);
  expect(await sample(metrics, 'amqp_messages_published_total', { type: 'widget.created' })).toBe(2);
  expect(await sample(metrics, 'amqp_messages_published_total', { type: 'ping.received' })).toBe(1);
});

test('a relay with a backlog it has not published reports its size and age', async () => {
  const metrics = new Metrics('events-test', { processMetrics: false });
  // Two rows locked by another transaction: the relay's claim skips them, so they stay unpublished while it runs.
  await h.emit('widget.created');
  await h.emit('widget.created');
  await h.pool.query(`UPDATE outbox SET created_at = now() - interval '90 seconds'`);
  const locker = await h.pool.connect();
  await locker.query('BEGIN');
  await locker.query('SELECT seq FROM outbox FOR UPDATE');
  const relay = await h.relay({ metrics });
  try {
    expect(await sample(metrics, 'outbox_backlog_rows')).toBe(2);
    expect(await sample(metrics, 'outbox_oldest_unsent_age_seconds')).toBeGreaterThanOrEqual(90);
  } finally {
    await locker.query('ROLLBACK');
    locker.release();
  }
  relay.wake(); // no commit to NOTIFY about: the rows were only unlocked
  await eventually(async () => (await sample(metrics, 'outbox_backlog_rows')) === 0);
});

test('a consumer counts deliveries by outcome and reports the messages waiting in its queue', async () => {
  const metrics = new Metrics('events-test', { processMetrics: false });
  const queue = h.queue();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const seen = new Map<string, number>();
  await h.consumer({
    queue,
    metrics,
    pool: h.pool,
    prefetch: 1,
    maxAttempts: 2,
    retryDelaysMs: [50],
    handler: async (e) => {
      const n = (seen.get(e.id) ?? 0) + 1;
      seen.set(e.id, n);
      const kind = (e.data as { kind: string }).kind;
      if (kind === 'hold') await gate;
      if (kind === 'flaky' && n === 1) throw new Error('first try fails');
      if (kind === 'broken') throw new Error('always fails');
    },
  });
  await h.relay();
  await h.emit('widget.updated', { kind: 'hold' });
  await eventually(async () => seen.size === 1);
  // Prefetch 1 and the first delivery held: these wait in the queue, which is the lag the gauge shows.
  await h.emit('widget.updated', { kind: 'flaky' });
  await h.emit('widget.updated', { kind: 'broken' });
  await h.emit('widget.updated', { kind: 'ok' });
  const ready = () => sample(metrics, 'amqp_queue_messages_ready', { queue });
  try {
    await eventually(async () => (await ready()) === 3);
  } finally {
    release(); // a held handler would keep the consumer's stop() waiting forever
  }
  const consumed = (outcome: string) => sample(metrics, 'amqp_messages_consumed_total', { queue, outcome });
  await eventually(async () => (await consumed('ack')) === 3 && (await consumed('dead')) === 1);
  expect(await consumed('retry')).toBe(2); // flaky once, broken once before its last attempt
  expect(await ready()).toBe(0);
});
