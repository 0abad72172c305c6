import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import type { EventEnvelope } from './envelope';
import { dlqName } from './topology';
import { EVENT_EXAMPLES, exampleContact } from './schemas/examples';
import { Harness, ORG, OWN_USER } from './test-support/harness';

/** A consumer with `parseData`: handlers get data parsed by its schema; data no schema accepts is dead-lettered at once, with the reason. */
let h: Harness;
beforeEach(async () => {
  h = await Harness.create();
});
afterEach(async () => {
  await h.close();
});

const envelope = (type: string, data: unknown, version?: number): EventEnvelope => ({
  id: randomUUID(),
  type,
  orgId: ORG,
  occurredAt: new Date().toISOString(),
  ...(version ? { version } : {}),
  data,
});

async function publish(events: EventEnvelope[]): Promise<void> {
  const ch = await h.probe();
  for (const e of events) ch.publish(h.exchange, e.type, Buffer.from(JSON.stringify(e)), { persistent: true, userId: OWN_USER });
}

describe.each([
  ['per event', { handler: true }],
  ['batch mode', { handler: false }],
])('parseData (%s)', (_, mode) => {
  it('hands the handler parsed data and dead-letters a payload failing its schema, naming the fields, without retrying it', async () => {
    const queue = h.queue();
    const seen: EventEnvelope[] = [];
    const record = async (e: EventEnvelope) => void seen.push(e);
    await h.consumer({
      queue,
      bindings: ['contact.*', 'widget.*'],
      parseData: true,
      maxAttempts: 5,
      ...(mode.handler ? { handler: record } : { batchHandler: async (events: EventEnvelope[]) => void (await Promise.all(events.map(record))) }),
    });

    const good = envelope('contact.created', { contact: { ...exampleContact, addedByANewerProducer: true } });
    const { name: _gone, ...nameless } = exampleContact;
    const bad = envelope('contact.created', { contact: { ...nameless, leadScore: 'high' } });
    const unknownVersion = envelope('contact.deleted', EVENT_EXAMPLES['contact.deleted'], 7);
    const unregistered = envelope('widget.created', { free: 'form' });
    await publish([bad, good, unknownVersion, unregistered]);

    await eventually(async () => seen.length === 2);
    expect(seen.map((e) => e.id)).toEqual([good.id, unregistered.id]);
    // Parsed: the field the schema does not know is gone; an unregistered type is left as it came.
    expect(seen[0].data).toEqual({ contact: exampleContact });
    expect(seen[1].data).toEqual({ free: 'form' });

    const ch = await h.probe();
    const first = await eventually(() => ch.get(dlqName(queue), { noAck: true }));
    const second = await eventually(() => ch.get(dlqName(queue), { noAck: true }));
    const parked = new Map([first, second].map((m) => [JSON.parse(m.content.toString()).id as string, m]));
    expect(JSON.parse(parked.get(bad.id)!.content.toString())).toEqual(bad);
    expect(parked.get(bad.id)!.properties.headers).toMatchObject({
      'x-crm-attempt': 1,
      'x-crm-error':
        'contact.created v1 data does not match its schema: contact.name: Invalid input: expected string, received undefined; contact.leadScore: Invalid input: expected number, received string',
    });
    expect(parked.get(unknownVersion.id)!.properties.headers).toMatchObject({
      'x-crm-attempt': 1,
      'x-crm-error': 'contact.deleted has no version 7 (known: 1)',
    });
  });
});

it('without parseData a consumer gets the data as it came', async () => {
  const queue = h.queue();
  const seen: EventEnvelope[] = [];
  await h.consumer({ queue, bindings: ['contact.*'], handler: async (e) => void seen.push(e) });
  const loose = envelope('contact.deleted', { id: 'not checked' });
  await publish([loose]);
  await eventually(async () => seen.length === 1);
  expect(seen[0].data).toEqual({ id: 'not checked' });
});
