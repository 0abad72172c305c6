import type { Queryable } from '@crm/db';
import { InvalidEnvelopeError, parseEnvelope } from './envelope';
import { enqueueEvent } from './outbox';
import { offCatalogue } from './test-support/off-catalogue';

const valid = {
  id: '0b8c7a52-5a0e-4c1e-9d53-3f0c2f7e6a11',
  type: 'contact.created',
  orgId: 'org',
  occurredAt: '2024-05-01T10:00:00.000Z',
  data: null,
};
const body = (v: unknown) => Buffer.from(JSON.stringify(v));

test('parseEnvelope accepts an envelope, with any data including null', () => {
  expect(parseEnvelope(body(valid))).toEqual(valid);
});

test.each([
  ['not JSON', Buffer.from('{nope')],
  ['not an object', body(42)],
  ['a missing type', body({ ...valid, type: undefined })],
  ['an id that is not a UUID', body({ ...valid, id: "x'); DROP TABLE outbox; --" })],
  ['no data field', body({ id: valid.id, type: valid.type, orgId: valid.orgId, occurredAt: valid.occurredAt })],
])('parseEnvelope refuses %s (it goes to the DLQ without retries)', (_, content) => {
  expect(() => parseEnvelope(content)).toThrow(InvalidEnvelopeError);
});

test('enqueueEvent refuses a type that cannot be a routing key and a date that is not one, before any query', async () => {
  const db = { query: jest.fn() } as unknown as Queryable;
  await expect(enqueueEvent(db, offCatalogue({ type: '', orgId: 'o', data: {} }))).rejects.toThrow('Invalid event type');
  await expect(enqueueEvent(db, offCatalogue({ type: 'x'.repeat(256), orgId: 'o', data: {} }))).rejects.toThrow('Invalid event type');
  await expect(enqueueEvent(db, offCatalogue({ type: 'a.b', orgId: 'o', data: {}, occurredAt: 'yesterday' }))).rejects.toThrow('Invalid occurredAt');
  expect((db.query as jest.Mock).mock.calls).toHaveLength(0);
});
