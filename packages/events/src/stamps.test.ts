import type { GetMessage } from 'amqplib';
import { eventually } from '@crm/testing';
import type { EventEnvelope } from './envelope';
import { EVENT_EXAMPLES } from './schemas/examples';
import { eventMessage } from './message';
import { EVENT_STAMP_HEADER, EVENT_STAMP_SEAL_HEADER, eventOrigin, STAMP_CHECKERS, type EventStamper, type EventStampVerifier } from './stamps';
import { dlqName } from './topology';
import { Harness, OWN_USER } from './test-support/harness';

/**
 * The relay stamps each event with its producer's signature and a consumer given `stamps` checks it and hands it to its
 * handlers (eventOrigin). The signature itself is @crm/grpc-kit's (event-stamp.ts, its unit tests; the real keys in
 * tests/security/event-stamps); here a readable stand-in shows what the relay and the consumer do with it.
 */
const signedBy = (iss: string): EventStamper => ({ stampEvent: (e) => `stamp|${iss}|${e.orgId}|${e.id}|${e.type}` });
const verifier: EventStampVerifier = {
  verifyEventStamp(stamp) {
    const [kind, iss, org, eid, typ] = stamp.split('|');
    if (kind !== 'stamp') throw new Error('bad signature');
    return { iss, org, eid, typ };
  },
};

let h: Harness;
beforeEach(async () => {
  h = await Harness.create();
});
afterEach(async () => {
  await h.close();
});

const INBOUND = EVENT_EXAMPLES['chatnet.inbound'];

test('a stamped event reaches the handler with its stamp as the origin; without `stamps` a consumer has none', async () => {
  const checked = h.queue();
  const unchecked = h.queue();
  const origins = new Map<string, Array<string | undefined>>([
    [checked, []],
    [unchecked, []],
  ]);
  const handler = (queue: string) => async (events: EventEnvelope[]) => void origins.get(queue)!.push(...events.map(eventOrigin));
  await h.consumer({ queue: checked, bindings: ['chatnet.inbound'], stamps: verifier, batchHandler: handler(checked) });
  await h.consumer({ queue: unchecked, bindings: ['chatnet.inbound'], batchHandler: handler(unchecked) });
  await h.relay({ stamps: signedBy('connector') });
  const e = await h.emit('chatnet.inbound', INBOUND);
  await eventually(async () => origins.get(checked)!.length === 1 && origins.get(unchecked)!.length === 1);
  expect(origins.get(checked)).toEqual([`stamp|connector|${e.orgId}|${e.id}|chatnet.inbound`]);
  expect(origins.get(unchecked)).toEqual([undefined]);
});

test.each([
  ['does not verify', () => 'forged', /does not verify: bad signature/],
  [
    'names an issuer that is not a producer of the type',
    (e: EventEnvelope) => `stamp|ai|${e.orgId}|${e.id}|${e.type}`,
    /issuer ai is not a producer/,
  ],
  ['was made for another org', (e: EventEnvelope) => `stamp|connector|another-org|${e.id}|${e.type}`, /another event/],
  ['was made for another event', (e: EventEnvelope) => `stamp|connector|${e.orgId}|00000000-0000-4000-8000-000000000000|${e.type}`, /another event/],
])('an event whose stamp %s is dead-lettered with the reason and never handled', async (_, stampOf, reason) => {
  const queue = h.queue();
  const seen: string[] = [];
  await h.consumer({ queue, bindings: ['chatnet.inbound'], stamps: verifier, handler: async (e) => void seen.push(e.id) });
  const ch = await h.probe();
  const e: EventEnvelope = {
    id: '6f7c2a34-2f0e-4d55-9c41-2b7b1c9a3e10',
    type: 'chatnet.inbound',
    orgId: 'org-a',
    occurredAt: new Date().toISOString(),
    data: INBOUND,
  };
  ch.publish(h.exchange, e.type, Buffer.from(JSON.stringify(e)), { userId: OWN_USER, headers: { [EVENT_STAMP_HEADER]: stampOf(e) } });
  const parked: GetMessage = await eventually(() => ch.get(dlqName(queue), { noAck: true }));
  expect(String(parked.properties.headers?.['x-refused-reason'])).toMatch(reason);
  expect(seen).toEqual([]);
});

test('only STAMPED_TYPES are stamped, and a consumer checking stamps of another type is refused at construction', async () => {
  const send = (type: string) => ({ id: 'e1', type, orgId: 'org-a', version: 1, occurredAt: new Date(), dataJson: '{}', traceparent: null });
  const stamped = eventMessage(send('chatnet.inbound'), OWN_USER, () => ({}), signedBy('connector'));
  expect(stamped.options.headers?.[EVENT_STAMP_HEADER]).toBe('stamp|connector|org-a|e1|chatnet.inbound');
  const plain = eventMessage(send('message.received'), OWN_USER, () => ({}), signedBy('messaging'));
  expect(plain.options.headers?.[EVENT_STAMP_HEADER]).toBeUndefined();
  await expect(
    h.consumer({ queue: h.queue(), bindings: ['contact.created'], stamps: verifier, batchHandler: async () => undefined }),
  ).rejects.toThrow(/contact.created carries no event stamp/);
});

test("a stamp travels with its seal for the type's checkers, and the consumer checks it with it; no seal without a sealer", async () => {
  const sealing: EventStamper = { ...signedBy('connector'), sealStamp: (stamp, consumers) => `seal|${consumers.join('+')}|${stamp}` };
  const seals: Array<string | undefined> = [];
  const recording: EventStampVerifier = {
    verifyEventStamp(stamp, seal) {
      seals.push(seal);
      return verifier.verifyEventStamp(stamp);
    },
  };
  const queue = h.queue();
  const handled: string[] = [];
  await h.consumer({
    queue,
    bindings: ['chatnet.inbound'],
    stamps: recording,
    batchHandler: async (events) => void handled.push(...events.map((e) => e.id)),
  });
  await h.relay({ stamps: sealing });
  const e = await h.emit('chatnet.inbound', INBOUND);
  await eventually(async () => handled.length === 1);
  expect(STAMP_CHECKERS['chatnet.inbound']).toEqual(['messaging']);
  expect(seals).toEqual([`seal|messaging|stamp|connector|${e.orgId}|${e.id}|chatnet.inbound`]);

  const send = { id: 'e1', type: 'chatnet.inbound', orgId: 'org-a', version: 1, occurredAt: new Date(), dataJson: '{}', traceparent: null };
  expect(eventMessage(send, OWN_USER, () => ({}), sealing).options.headers?.[EVENT_STAMP_SEAL_HEADER]).toBe(
    'seal|messaging|stamp|connector|org-a|e1|chatnet.inbound',
  );
  expect(eventMessage(send, OWN_USER, () => ({}), signedBy('connector')).options.headers?.[EVENT_STAMP_SEAL_HEADER]).toBeUndefined();
});
