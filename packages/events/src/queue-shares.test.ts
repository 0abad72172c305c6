import { randomUUID } from 'node:crypto';
import type { PoolClient } from '@crm/db';
import { eventually } from '@crm/testing';
import { EventConsumer } from './consumer';
import { eachEvent } from './consumer-options';
import type { EventEnvelope } from './envelope';
import type { QueueShare } from './queue-shares';
import { Harness, log, ORG, OWN_USER } from './test-support/harness';

let h: Harness;
beforeEach(async () => {
  h = await Harness.create();
  await h.pool.query('CREATE TABLE share_effects (event_id uuid NOT NULL, share text NOT NULL, xid bigint NOT NULL)');
});
afterEach(async () => {
  await h.close();
});

/** A share recording each event it applies with the transaction it ran in; `fails` decides which events it throws on. */
function share(name: string, bindings: string[], fails: (e: EventEnvelope) => boolean = () => false): QueueShare {
  return {
    name,
    bindings,
    apply: async (events: EventEnvelope[], db: PoolClient) => {
      for (const e of events) {
        if (fails(e)) throw new Error(`${name} cannot apply ${e.id}`);
        await db.query('INSERT INTO share_effects (event_id, share, xid) VALUES ($1, $2, txid_current())', [e.id, name]);
      }
    },
  };
}

async function effects(name: string): Promise<Array<{ event_id: string; xid: string }>> {
  return (await h.pool.query('SELECT event_id, xid FROM share_effects WHERE share = $1', [name])).rows;
}

async function claims(consumer: string): Promise<string[]> {
  return (await h.pool.query('SELECT event_id FROM processed_events WHERE consumer = $1 ORDER BY event_id', [consumer])).rows.map((r) => r.event_id);
}

function envelope(type: string, data: unknown = {}): EventEnvelope {
  return { id: randomUUID(), type, orgId: ORG, occurredAt: new Date().toISOString(), data };
}

async function publishBurst(events: EventEnvelope[]): Promise<void> {
  const ch = await h.probe();
  for (const e of events) ch.publish(h.exchange, e.type, Buffer.from(JSON.stringify(e)), { persistent: true, userId: OWN_USER });
}

const sorted = (ids: string[]) => [...ids].sort();

test('a batch reaches every share taking each event, in one transaction; each share claims its own ids, the queue none', async () => {
  const queue = h.queue();
  const all = share(`${queue}.all`, ['widget.*']);
  const updates = share(`${queue}.updates`, ['widget.updated']);
  await h.consumer({ queue, pool: h.pool, bindings: ['widget.*', 'widget.updated'], shares: [all, updates], batchFlushMs: 300 });
  const sent = [envelope('widget.created'), envelope('widget.updated'), envelope('widget.created'), envelope('widget.updated')];
  await publishBurst([...sent, sent[1]]); // the last one redelivered within the batch

  await eventually(async () => (await effects(all.name)).length === 4 && (await effects(updates.name)).length === 2, 5_000);
  expect(new Set([...(await effects(all.name)), ...(await effects(updates.name))].map((e) => e.xid)).size).toBe(1);
  expect(await claims(all.name)).toEqual(sorted(sent.map((e) => e.id)));
  expect(await claims(updates.name)).toEqual(sorted([sent[1].id, sent[3].id]));
  expect(await claims(queue)).toEqual([]);
});

test('a share failing on an event rolls back alone: the other share and the rest of the batch commit once; the retry applies it to the failed share only', async () => {
  const queue = h.queue();
  const poisoned = new Set<string>();
  const steady = share(`${queue}.steady`, ['widget.updated']);
  const fragile = share(`${queue}.fragile`, ['widget.updated'], (e) => poisoned.has(e.id));
  await h.consumer({
    queue,
    pool: h.pool,
    bindings: ['widget.updated'],
    shares: [fragile, steady],
    batchFlushMs: 300,
    retryDelaysMs: [200],
    maxAttempts: 20,
  });
  const sent = [envelope('widget.updated'), envelope('widget.updated'), envelope('widget.updated')];
  poisoned.add(sent[1].id);
  await publishBurst(sent);

  // Every event applied by the steady share, the fragile one still failing on the poisoned event (and retrying it).
  await eventually(async () => (await effects(steady.name)).length === 3 && (await effects(fragile.name)).length === 2, 5_000);
  expect(await claims(fragile.name)).toEqual(sorted([sent[0].id, sent[2].id]));
  poisoned.clear();
  await eventually(async () => (await effects(fragile.name)).length === 3, 5_000);
  expect(sorted((await effects(steady.name)).map((e) => e.event_id))).toEqual(sorted(sent.map((e) => e.id)));
  expect(await claims(fragile.name)).toEqual(sorted(sent.map((e) => e.id)));
});

test('shares are refused without a pool, with a binding no share takes, or a share taking what the queue is not bound to', () => {
  const base = { amqpUrl: 'amqp://127.0.0.1:9', exchange: 'x', queue: 'x.shares', logger: log };
  const a = share('x.a', ['widget.created']);
  expect(() => new EventConsumer({ ...base, bindings: ['widget.created'], shares: [a] } as never)).toThrow(/give a pool/);
  expect(() => new EventConsumer({ ...base, bindings: ['widget.created', 'widget.deleted'], shares: [a], pool: h.pool })).toThrow(
    /no share takes widget.deleted/,
  );
  expect(() => new EventConsumer({ ...base, bindings: ['widget.updated'], shares: [a], pool: h.pool })).toThrow(/not bound to/);
  expect(() => new EventConsumer({ ...base, bindings: ['widget.created'], shares: [a, a], pool: h.pool })).toThrow(/two shares with one name/);
  expect(() => new EventConsumer({ ...base, bindings: ['widget.created'], shares: [a], pool: h.pool })).not.toThrow();
});

test('draining: a retired queue is unbound and emptied; one that does not exist is not created', async () => {
  const queue = h.queue();
  const ch = await h.probe();
  // As an older version left it: bound, with an event in it.
  const before = await h.consumer({ queue, bindings: ['widget.created'], batchHandler: async () => undefined });
  await before.stop();
  const left = envelope('widget.created');
  await publishBurst([left]);
  await eventually(async () => (await ch.checkQueue(queue)).messageCount === 1, 5_000);

  await h.consumer({ queue, pool: h.pool, bindings: ['widget.created'], draining: true, batchHandler: eachEvent(h.recordEffect(queue)) });
  await eventually(async () => (await h.effects(queue)).total === 1, 5_000);
  // Unbound: a new event does not reach it (a marker sent straight to it comes after where the copy would be).
  await publishBurst([envelope('widget.created')]);
  const marker = envelope('widget.created');
  ch.sendToQueue(queue, Buffer.from(JSON.stringify(marker)), { persistent: true, userId: OWN_USER });
  await eventually(async () => (await claims(queue)).includes(marker.id), 5_000);
  expect(await h.effects(queue)).toEqual({ total: 2, distinct: 2 });
  expect((await claims(queue)).sort()).toEqual(sorted([left.id, marker.id]));

  const missing = h.queue();
  const drain = await h.consumer({
    queue: missing,
    pool: h.pool,
    bindings: ['widget.created'],
    draining: true,
    batchHandler: eachEvent(h.recordEffect(missing)),
  });
  expect(drain.connected).toBe(true);
  await expect(ch.checkQueue(missing)).rejects.toThrow(/404/);
});

/**
 * `pool`, with the text of every statement its clients have run recorded once it has finished (a multi-statement query is
 * one round trip). Recorded on completion, not when sent: a test that sees `COMMIT` then reads the claims on another
 * connection, which must find them committed.
 */
function recording(pool: Harness['pool']) {
  const sent: string[] = [];
  const wrapped = new WeakSet<object>();
  const connect = async () => {
    const client = await pool.connect();
    if (!wrapped.has(client)) {
      wrapped.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        const q = args[0] as string | { text: string };
        const text = typeof q === 'string' ? q : q.text;
        const last = args.length - 1;
        const callback = args[last];
        if (typeof callback === 'function') {
          // The pool's own query() passes a callback.
          args[last] = (...result: unknown[]) => {
            sent.push(text);
            return callback(...result);
          };
          return query(...args);
        }
        return (query(...args) as Promise<unknown>).finally(() => sent.push(text));
      };
    }
    return client;
  };
  return { sent, pool: Object.assign(Object.create(pool) as Harness['pool'], { connect }) };
}

test('an event alone in its batch and taken by two shares costs the shared transaction’s round trips, not a savepoint per share', async () => {
  const queue = h.queue();
  const first = share(`${queue}.first`, ['widget.updated']);
  const second = share(`${queue}.second`, ['widget.updated']);
  const db = recording(h.pool);
  await h.consumer({ queue, pool: db.pool, bindings: ['widget.updated'], shares: [first, second], batchFlushMs: 0 });
  const sent = envelope('widget.updated');
  await publishBurst([sent]);

  // BEGIN with both claims, each share's insert, COMMIT (read before this test's own queries reuse the clients).
  await eventually(async () => db.sent.includes('COMMIT'), 5_000);
  expect(db.sent.filter((q) => !q.startsWith('DELETE FROM processed_events'))).toEqual([
    expect.stringMatching(/^BEGIN; INSERT INTO processed_events/),
    expect.stringMatching(/^INSERT INTO share_effects/),
    expect.stringMatching(/^INSERT INTO share_effects/),
    'COMMIT',
  ]);
  expect(await effects(first.name)).toHaveLength(1);
  expect(await effects(second.name)).toHaveLength(1);
  expect(await claims(first.name)).toEqual([sent.id]);
  expect(await claims(second.name)).toEqual([sent.id]);
});

test('an event a share has nothing to do for (idle) is neither claimed nor applied; a batch with nothing to do opens no transaction', async () => {
  const queue = h.queue();
  const busy = share(`${queue}.busy`, ['widget.*']);
  const quiet: QueueShare = { ...share(`${queue}.quiet`, ['widget.*']), idle: (e) => e.type === 'widget.viewed' };
  const db = recording(h.pool);
  await h.consumer({ queue, pool: db.pool, bindings: ['widget.*'], shares: [quiet, busy], batchFlushMs: 300 });
  const viewed = envelope('widget.viewed');
  const updated = envelope('widget.updated');
  await publishBurst([viewed, updated]);
  await eventually(async () => (await effects(busy.name)).length === 2, 5_000);
  expect((await effects(quiet.name)).map((e) => e.event_id)).toEqual([updated.id]);
  expect(await claims(quiet.name)).toEqual([updated.id]);

  // Events nothing has anything to do for cost no statement: the only transaction is the busy event's.
  const idleQueue = h.queue();
  const lone = { ...share(`${idleQueue}.lone`, ['gadget.*']), idle: (e: EventEnvelope) => e.type === 'gadget.viewed' };
  const idleDb = recording(h.pool);
  await h.consumer({ queue: idleQueue, pool: idleDb.pool, bindings: ['gadget.*'], shares: [lone], batchFlushMs: 0 });
  const idleOnes = [envelope('gadget.viewed'), envelope('gadget.viewed')];
  const last = envelope('gadget.updated');
  await publishBurst([...idleOnes, last]);
  await eventually(async () => idleDb.sent.includes('COMMIT'), 5_000);
  const sent = idleDb.sent.filter((q) => !q.startsWith('DELETE FROM processed_events'));
  expect(sent).toEqual([
    expect.stringMatching(/^BEGIN; INSERT INTO processed_events/),
    expect.stringMatching(/^INSERT INTO share_effects/),
    'COMMIT',
  ]);
  expect(sent[0]).toContain(last.id);
  expect(idleOnes.some((e) => sent[0].includes(e.id))).toBe(false);
  expect(await claims(lone.name)).toEqual([last.id]);
});
