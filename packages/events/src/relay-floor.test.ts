import { Client } from 'pg';
import { eventually } from '@crm/testing';
import { enqueueEvent } from './outbox';
import { RELAY_APPLICATION_NAME } from './relay';
import { OUTBOX_CHANNEL } from './tables';
import { Harness, ORG, recordQueries } from './test-support/harness';
import { offCatalogue } from './test-support/off-catalogue';

// The relay's claims start at a floor (OutboxRelay.floor): past what it published, lowered by each commit's
// notification to the lowest seq it enqueued. Every relay here polls once a minute, so within a test's waits only a
// notification can bring an event.

let h: Harness;
let sent: string[];
/** The claims among them (BEGIN with the SELECT … FOR UPDATE SKIP LOCKED). */
const claims = () => sent.filter((q) => /FOR UPDATE SKIP LOCKED$/.test(q));
let spy: jest.SpyInstance;
beforeEach(async () => {
  h = await Harness.create();
  // Every query the relay's own connection sends.
  sent = [];
  spy = recordQueries(RELAY_APPLICATION_NAME, sent);
});
afterEach(async () => {
  spy.mockRestore();
  await h.close();
});

/** The floor of a claim (`seq >= n`), or 0 for a claim over the whole unpublished index. */
function floorOf(claim: string): bigint {
  const m = /AND seq >= (\d+) ORDER BY seq/.exec(claim);
  return m ? BigInt(m[1]) : 0n;
}

async function seqOf(id: string): Promise<bigint> {
  const { rows } = await h.pool.query<{ seq: string }>('SELECT seq FROM outbox WHERE id = $1', [id]);
  return BigInt(rows[0].seq);
}

test('claims read from past what was published; a transaction that took a lower seq and commits later is still published at its commit', async () => {
  const queue = h.queue();
  const got = new Set<string>();
  await h.consumer({ queue, handler: async (e) => void got.add(e.id) });
  await h.relay({ pollMs: 60_000 });

  // A writer takes its seq and holds its transaction open.
  const slow = await h.pool.connect();
  await slow.query('BEGIN');
  const late = await enqueueEvent(slow, offCatalogue({ type: 'widget.created', orgId: ORG, data: { n: 0 } }));
  try {
    // Others commit after it and are published.
    const first = await h.emit('widget.updated', { n: 1 });
    await eventually(async () => got.has(first.id), 5_000, 5);
    const second = await h.emit('widget.updated', { n: 2 });
    await eventually(async () => got.has(second.id), 5_000, 5);
    // The claim for the second one started past the first: the floor was in use, above the open transaction's row.
    const lateSeq = BigInt((await slow.query<{ seq: string }>('SELECT seq FROM outbox WHERE id = $1', [late.id])).rows[0].seq);
    const firstSeq = await seqOf(first.id);
    const floors = claims().map(floorOf);
    expect(floors.some((f) => f > firstSeq)).toBe(true);
    expect(floors[floors.length - 1]).toBeGreaterThan(lateSeq);

    // Its commit notifies its seq, the floor comes back down to it, and it goes out now, not at the next poll.
    sent.length = 0;
    await slow.query('COMMIT');
    await eventually(async () => got.has(late.id), 5_000, 5);
    expect(
      claims()
        .map(floorOf)
        .some((f) => f <= lateSeq),
    ).toBe(true);
  } finally {
    await slow.query('ROLLBACK').catch(() => undefined);
    slow.release();
  }
  const { rows } = await h.pool.query('SELECT count(*)::int AS unpublished FROM outbox WHERE published_at IS NULL');
  expect(rows[0].unpublished).toBe(0);
});

test('a notification without a seq (an older writer) makes the next claim read the whole unpublished index', async () => {
  const queue = h.queue();
  const got = new Set<string>();
  await h.consumer({ queue, handler: async (e) => void got.add(e.id) });
  await h.relay({ pollMs: 60_000 });
  const e = await h.emit('widget.updated', { n: 1 });
  await eventually(async () => got.has(e.id), 5_000, 5);
  // A writer of this version notifies its seq: the claim starts past what was published, at most at that seq.
  sent.length = 0;
  const next = await h.emit('widget.updated', { n: 2 });
  await eventually(async () => got.has(next.id), 5_000, 5);
  expect(floorOf(claims()[0])).toBeGreaterThan(await seqOf(e.id));
  expect(floorOf(claims()[0])).toBeLessThanOrEqual(await seqOf(next.id));

  // An older writer's row (it notifies with an empty payload), inserted below nothing the relay knows of.
  sent.length = 0;
  const { rows } = await h.pool.query<{ id: string }>(
    `WITH inserted AS (
       INSERT INTO outbox (id, type, org_id, occurred_at, data) VALUES (gen_random_uuid(), 'widget.created', $1, now(), '{}') RETURNING id
     )
     SELECT id::text, pg_notify('${OUTBOX_CHANNEL}', '') FROM inserted`,
    [ORG],
  );
  await eventually(async () => got.has(rows[0].id), 5_000, 5);
  expect(floorOf(claims()[0])).toBe(0n);
});

test('an enqueue that inserts nothing (its id is already there) sends no notification', async () => {
  const listener = new Client({ connectionString: h.db.url });
  await listener.connect();
  const heard: string[] = [];
  listener.on('notification', (n) => heard.push(n.payload ?? ''));
  await listener.query(`LISTEN ${OUTBOX_CHANNEL}`);
  try {
    const e = await h.emit('widget.updated', { n: 1 });
    await eventually(async () => heard.length === 1, 5_000, 5);
    expect(BigInt(heard[0])).toBe(await seqOf(e.id));
    // The same stable id again: nothing inserted, nothing to wake a relay for.
    const again = await h.pool.connect();
    try {
      await again.query('BEGIN');
      await enqueueEvent(again, offCatalogue({ id: e.id, type: 'widget.updated', orgId: ORG, data: { n: 1 } }));
      await again.query('COMMIT');
    } finally {
      again.release();
    }
    const marker = await h.emit('widget.updated', { n: 2 });
    await eventually(async () => heard.length === 2, 5_000, 5);
    expect(BigInt(heard[1])).toBe(await seqOf(marker.id));
  } finally {
    await listener.end();
  }
});

test('a commit notified while the claim that reads it is starting does not hold the floor down at its seq', async () => {
  const queue = h.queue();
  const got = new Set<string>();
  await h.consumer({ queue, handler: async (e) => void got.add(e.id) });
  await h.relay({ pollMs: 60_000 });
  const first = await h.emit('widget.updated', { n: 1 });
  await eventually(async () => got.has(first.id), 5_000, 5);

  // The next claim on the relay's connection waits for a commit, and for its notification to reach the relay, before
  // it is sent: the claim reads that row, and the relay heard of it while the claim was in flight.
  spy.mockRestore();
  const original = Client.prototype.query;
  let raced: Promise<{ id: string }> | undefined;
  spy = jest.spyOn(Client.prototype, 'query').mockImplementation(function (this: Client, ...args: unknown[]) {
    const name = (this as unknown as { connectionParameters: { application_name?: string } }).connectionParameters.application_name;
    const text = typeof args[0] === 'string' ? args[0] : '';
    const forward = () => (original as (...a: unknown[]) => unknown).apply(this, args);
    if (name !== RELAY_APPLICATION_NAME || raced || !/FOR UPDATE SKIP LOCKED$/.test(text)) return forward();
    raced = h.emit('widget.updated', { n: 2 });
    return raced.then(() => new Promise((r) => setTimeout(r, 100))).then(forward);
  } as never);
  const wakeUp = await h.emit('widget.updated', { n: 3 });
  await eventually(async () => got.has(wakeUp.id) && raced !== undefined && got.has((await raced).id), 5_000, 5);
  const racedSeq = await seqOf((await raced!).id);

  // The relay's later claims start past that row: it was read by the claim it was notified during.
  spy.mockRestore();
  sent = [];
  spy = recordQueries(RELAY_APPLICATION_NAME, sent);
  const last = await h.emit('widget.updated', { n: 4 });
  await eventually(async () => got.has(last.id), 5_000, 5);
  expect(claims().length).toBeGreaterThan(0);
  for (const claim of claims()) expect(floorOf(claim)).toBeGreaterThan(racedSeq);
});
