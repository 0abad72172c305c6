// bench/relay: how fast the outbox relay of packages/events publishes what a transaction committed. These figures
// were latency bounds inside packages/events/src/events.test.ts, where a loaded machine could fail a correct build;
// the tests keep the correctness (NOTIFY rather than the poll, nothing lost or applied twice) and this measures.
//   1. commit → consumed, one event at a time, relay poll 60 s (so only LISTEN/NOTIFY can explain a fast arrival);
//   2. the same after the relay's LISTEN connection was terminated and came back;
//   3. throughput: BENCH_EVENTS (2,000) events in 100-event transactions from 4 writers through two relays,
//      applied by one consumer (prefetch 100, 10 handlers) with an effect row each, exactly once.
// Built packages required (npx turbo run build). Usage: node bench/relay/run.mjs   (writes the "## relay" section
// of bench/RESULTS.md). A fresh database and exchange; both removed at the end.
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { writeResultsSection } from '../lib/results.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const require = createRequire(path.join(root, 'packages', 'events', 'package.json'));
const { EventConsumer, OutboxRelay, enqueueEvent, installEventTables, deleteTopology } = require('./dist/index.js');
const { createPool, withTransaction } = require('@crm/db');
const { createLogger } = require('@crm/logger');
const { createTestDatabase, infra, uniqueName } = require('@crm/testing');

const SINGLES = Number(process.env.BENCH_SINGLES ?? 200);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 2_000);
const ORG = '5a1c7c43-1f9b-4f55-9a8e-2f8f3c1d0e01';
const log = createLogger('bench-relay', 'silent');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x) => x.toFixed(1);

async function until(fn, timeoutMs) {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms`);
    await sleep(1);
  }
}

const db = await createTestDatabase('bench_relay');
const pool = createPool(db.url, 12);
const exchange = uniqueName('bench_relay_x');
const queues = [uniqueName('bench_relay_q'), uniqueName('bench_relay_q')];
const running = [];
const start = async (x) => (await x.start(), running.push(x), x);
try {
  await installEventTables(pool);
  await pool.query('CREATE TABLE effects (event_id uuid NOT NULL)');
  // Routing keys without an event schema: the payloads here are free-form (a registered type's data is checked).
  const emit = (data) => withTransaction(pool, (c) => enqueueEvent(c, { type: 'bench.updated', orgId: ORG, data }));

  // 1 and 2: one event at a time.
  const arrivedAt = new Map();
  await start(
    new EventConsumer({
      amqpUrl: infra.amqpUrl,
      exchange,
      queue: queues[0],
      bindings: ['bench.updated'],
      logger: log,
      handler: async (e) => void arrivedAt.set(e.id, performance.now()),
    }),
  );
  await start(new OutboxRelay({ pool, amqpUrl: infra.amqpUrl, exchange, logger: log, pollMs: 60_000 }));
  const measure = async (n) => {
    const latencies = [];
    for (let i = 0; i < n; i++) {
      const e = await emit({ i });
      const committedAt = performance.now();
      await until(() => arrivedAt.has(e.id), 5_000);
      latencies.push(arrivedAt.get(e.id) - committedAt);
      await sleep(10);
    }
    return latencies;
  };
  const notify = await measure(SINGLES);
  await pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [
    'crm-outbox-relay',
  ]);
  const meanwhile = await emit({ meanwhile: true });
  await until(() => arrivedAt.has(meanwhile.id), 10_000);
  const relisten = await measure(Math.min(SINGLES, 50));

  // 3: throughput, exactly once.
  await start(
    new EventConsumer({
      amqpUrl: infra.amqpUrl,
      exchange,
      queue: queues[1],
      bindings: ['bench.received'],
      logger: log,
      pool,
      prefetch: 100,
      concurrency: 10,
      handler: async (e, c) => void (await c.query('INSERT INTO effects (event_id) VALUES ($1)', [e.id])),
    }),
  );
  await start(new OutboxRelay({ pool, amqpUrl: infra.amqpUrl, exchange, logger: log, pollMs: 60_000 }));
  const startedAt = performance.now();
  const perWriter = Math.ceil(EVENTS / 400);
  await Promise.all(
    Array.from({ length: 4 }, () =>
      (async () => {
        for (let t = 0; t < perWriter; t++) {
          await withTransaction(pool, async (c) => {
            for (let i = 0; i < 100; i++) await enqueueEvent(c, { type: 'bench.received', orgId: ORG, data: { t, i } });
          });
        }
      })(),
    ),
  );
  const total = perWriter * 400;
  const effects = async () => (await pool.query('SELECT count(*)::int AS total, count(DISTINCT event_id)::int AS distinct FROM effects')).rows[0];
  await until(async () => (await effects()).total >= total, 120_000);
  const elapsed = performance.now() - startedAt;
  await sleep(500);
  const applied = await effects();

  const load = os.loadavg()[0].toFixed(1);
  const section = `## relay

Command: \`node bench/relay/run.mjs\` (packages/events from dist; one PostgreSQL database, one exchange; relay poll 60 s, so
every fast arrival came through LISTEN/NOTIFY). Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${os.cpus().length} cores; 1-minute load average at the end ${load} (other work shares this machine).
These were latency bounds in packages/events/src/events.test.ts; the tests keep only what must hold on any machine.

| path | events | p50 ms | p90 ms | max ms |
|---|---|---|---|---|
| commit → consumed (NOTIFY) | ${notify.length} | ${ms(pct(notify, 50))} | ${ms(pct(notify, 90))} | ${ms(Math.max(...notify))} |
| the same after the LISTEN connection was terminated | ${relisten.length} | ${ms(pct(relisten, 50))} | ${ms(pct(relisten, 90))} | ${ms(Math.max(...relisten))} |

Throughput: ${total} events (4 writers, 100 per transaction, two relays, one consumer of 10 handlers with an effect row each)
applied in ${(elapsed / 1000).toFixed(2)} s, ${Math.round(total / (elapsed / 1000))} events/s; effects ${applied.total}, distinct ${applied.distinct}${applied.total === total && applied.distinct === total ? ' (exactly once)' : ' (NOT exactly once)'}.
`;
  writeResultsSection(path.join(root, 'bench', 'RESULTS.md'), 'relay', section);
} finally {
  for (const x of running.reverse()) await x.stop().catch(() => undefined);
  await pool.end();
  await db.drop();
  await deleteTopology(infra.amqpUrl, exchange, queues);
}
