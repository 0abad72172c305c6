import { randomUUID } from 'node:crypto';
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { eventually } from '@crm/testing';
import { createLogger } from '@crm/logger';
import { BatchLanes, type BatchApply } from './batch-lanes';
import { DeliveryReader, type Delivery } from './delivery';
import type { EventEnvelope } from './envelope';
import type { DeliverySettler } from './settle';

/** Batch mode on its own: deliveries in, batches applied, outcomes handed to a settler that only records them. */
const log = createLogger('batch-lanes-test', 'silent');
const channel = {} as ConfirmChannel;
const reader = new DeliveryReader('q', { ownUser: 'svc', userPrefix: '' }, false);
let tag = 0;

function message(type: string, orgId: string): ConsumeMessage {
  const body = { id: randomUUID(), type, orgId, occurredAt: new Date().toISOString(), data: {} };
  return {
    content: Buffer.from(JSON.stringify(body)),
    fields: { deliveryTag: ++tag, routingKey: type },
    properties: { headers: {}, userId: 'svc' },
  } as unknown as ConsumeMessage;
}

function lanes(apply: BatchApply, o: { lanes?: number; size?: number } = {}) {
  const outcomes: Array<[string, string[]]> = [];
  const ids = (ds: Delivery[]) => ds.map((d) => (d.msg.content.toString().startsWith('{') ? idOf(d.msg) : 'unparsable'));
  const settler = {
    received: () => undefined,
    applied: (d: Delivery) => void outcomes.push(['applied', ids([d])]),
    appliedAll: (ds: Delivery[]) => void outcomes.push(['appliedAll', ids(ds)]),
    failed: async (d: Delivery) => void outcomes.push(['failed', ids([d])]),
    malformed: async (d: Delivery) => void outcomes.push(['malformed', ids([d])]),
  } as unknown as DeliverySettler;
  const batches = new BatchLanes({
    queue: 'q',
    log,
    lanes: o.lanes ?? 1,
    size: o.size ?? 100,
    flushMs: 20,
    key: (e) => e.orgId,
    apply,
    reader,
    settler,
    track: (work) => work,
    stopping: () => false,
  });
  return { batches, outcomes };
}

const idOf = (m: ConsumeMessage) => JSON.parse(m.content.toString()).id as string;

test('events of one key are applied in delivery order, one batch at a time, and acked together', async () => {
  const seen: string[][] = [];
  const { batches, outcomes } = lanes({ all: async (events) => void seen.push(events.map((e) => e.id)), one: async () => undefined }, { lanes: 4 });
  const msgs = Array.from({ length: 6 }, () => message('widget.updated', 'org-a'));
  for (const m of msgs) batches.collect(channel, m);
  await eventually(async () => outcomes.length === 1);
  expect(seen).toEqual([msgs.map(idOf)]);
  expect(outcomes).toEqual([['appliedAll', msgs.map(idOf)]]);
});

test('a full batch goes at once; what arrives meanwhile waits for it and goes next', async () => {
  const seen: number[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const { batches, outcomes } = lanes(
    {
      all: async (events) => {
        seen.push(events.length);
        if (seen.length === 1) await held;
      },
      one: async () => undefined,
    },
    { size: 3 },
  );
  for (let i = 0; i < 5; i++) batches.collect(channel, message('widget.updated', 'org-a'));
  await eventually(async () => seen.length === 1);
  expect(seen).toEqual([3]);
  release();
  await eventually(async () => outcomes.length === 2);
  expect(seen).toEqual([3, 2]);
});

test('a failed batch is applied event by event: only the event that fails again is failed, the others are applied', async () => {
  const msgs = Array.from({ length: 3 }, () => message('widget.updated', 'org-a'));
  const poison = idOf(msgs[1]);
  const apply: BatchApply = {
    all: async () => Promise.reject(new Error('batch failed')),
    one: async (event: EventEnvelope) => {
      if (event.id === poison) throw new Error('poison');
    },
  };
  const { batches, outcomes } = lanes(apply);
  for (const m of msgs) batches.collect(channel, m);
  await eventually(async () => outcomes.length === 3);
  expect(outcomes).toEqual([
    ['applied', [idOf(msgs[0])]],
    ['failed', [poison]],
    ['applied', [idOf(msgs[2])]],
  ]);
});

test('a body that is not an envelope never enters a batch', async () => {
  const seen: string[][] = [];
  const { batches, outcomes } = lanes({ all: async (events) => void seen.push(events.map((e) => e.id)), one: async () => undefined });
  const good = message('widget.updated', 'org-a');
  const bad = { ...message('widget.updated', 'org-a'), content: Buffer.from('not json') } as ConsumeMessage;
  batches.collect(channel, bad);
  batches.collect(channel, good);
  await eventually(async () => seen.length === 1);
  expect(seen).toEqual([[idOf(good)]]);
  expect(outcomes.map(([kind]) => kind).sort()).toEqual(['appliedAll', 'malformed']);
});
