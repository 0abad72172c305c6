import Ajv2020 from 'ajv/dist/2020';
import type { Queryable } from '@crm/db';
import { enqueueEvent, enqueueEvents } from './outbox';
import {
  checkProducedData,
  currentVersion,
  eventDefinitions,
  eventSchemas,
  InvalidEventDataError,
  parseEventData,
  PublicContact,
  publicEventTypes,
  webhookData,
} from './schemas';
import { eventCatalogue } from './schemas/catalogue';
import { EVENT_EXAMPLES, exampleContact } from './schemas/examples';

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v));

describe('eventSchemas[type][version]', () => {
  it('has a sample of every defined type, and each parses to itself and passes the producer check', () => {
    const types = eventDefinitions().map((d) => d.type);
    expect(types.filter((t) => !(t in EVENT_EXAMPLES))).toEqual([]);
    expect(Object.keys(EVENT_EXAMPLES).filter((t) => !types.includes(t))).toEqual([]);
    for (const d of eventDefinitions()) {
      expect([d.type, parseEventData(d.type, d.version, clone(EVENT_EXAMPLES[d.type]))]).toEqual([d.type, EVENT_EXAMPLES[d.type]]);
      expect(() => checkProducedData(d.type, d.version, EVENT_EXAMPLES[d.type])).not.toThrow();
    }
  });

  it('is indexed by type, then version; every type is at version 1 today', () => {
    expect(eventSchemas['contact.created'][1].type).toBe('contact.created');
    expect(currentVersion('contact.created')).toBe(1);
    expect(currentVersion('not.registered')).toBe(1);
  });

  it('the producer check names a missing field, a wrong type and a field the schema does not describe', () => {
    const { name: _gone, ...noName } = exampleContact;
    expect(() => checkProducedData('contact.created', 1, { contact: noName })).toThrow(
      new InvalidEventDataError(
        'contact.created v1 data does not match its schema: contact.name: Invalid input: expected string, received undefined',
      ),
    );
    expect(() => checkProducedData('message.received', 1, { ...(EVENT_EXAMPLES['message.received'] as object), sentAt: 'yesterday' })).toThrow(
      /sentAt: Invalid ISO datetime/,
    );
    expect(() => checkProducedData('contact.updated', 1, { contact: { ...exampleContact, customFieldsJson: '{}' }, changes: [] })).toThrow(
      new InvalidEventDataError('contact.updated v1 data has fields its schema does not describe: contact.customFieldsJson'),
    );
    expect(() => checkProducedData('contact.deleted', 2, { id: exampleContact.id })).toThrow(
      new InvalidEventDataError('contact.deleted has no version 2 (known: 1)'),
    );
    // Types without a schema (tests' own, a future one) are not checked.
    expect(() => checkProducedData('widget.created', 1, { anything: true })).not.toThrow();
  });

  it('enqueueEvent and enqueueEvents refuse data that does not fit, before any query', async () => {
    const db = { query: jest.fn() } as unknown as Queryable;
    await expect(enqueueEvent(db, { type: 'contact.deleted', orgId: 'o', data: { id: 'not-an-id' } })).rejects.toThrow(
      /contact\.deleted v1 data does not match its schema: id: Invalid GUID/,
    );
    await expect(
      enqueueEvents(db, [
        { type: 'contact.deleted', orgId: 'o', data: { id: exampleContact.id } },
        // @ts-expect-error -- the types refuse it too; the check at run time is for data they cannot see (parsed JSON)
        { type: 'contact.created', orgId: 'o', data: {} },
      ]),
    ).rejects.toThrow(InvalidEventDataError);
    expect((db.query as jest.Mock).mock.calls).toHaveLength(0);
  });

  it('a consumer parse keeps what it knows and drops fields it does not (a newer producer may add one)', () => {
    const data = { ...(EVENT_EXAMPLES['conversation.archived'] as object), addedLater: 1 };
    expect(parseEventData('conversation.archived', 1, data)).toEqual(EVENT_EXAMPLES['conversation.archived']);
    expect(parseEventData('widget.created', 1, { kept: 'as is' })).toEqual({ kept: 'as is' });
    expect(() => parseEventData('conversation.archived', 1, null)).toThrow(InvalidEventDataError);
  });
});

describe('webhook payloads: the public resource shapes', () => {
  it('contact.* carry the public API contact (fullName; empty phone, email, notes as null)', () => {
    const expected = {
      id: exampleContact.id,
      fullName: 'Ada Lovelace',
      phone: '+84901234567',
      email: null,
      source: 'api',
      status: 'lead',
      notes: 'met at the fair',
      tags: ['vip'],
      customFields: { plan: 'gold', seats: 3, trial: false },
      createdAt: exampleContact.createdAt,
      updatedAt: exampleContact.updatedAt,
    };
    expect(webhookData('contact.created', 1, EVENT_EXAMPLES['contact.created'])).toEqual({ contact: expected });
    expect(PublicContact.parse(expected)).toEqual(expected);
    // Changed fields under their public names; the threshold is internal (automation's alert).
    const updated = { ...(EVENT_EXAMPLES['contact.updated'] as object), changes: ['name', 'tags'] };
    expect(webhookData('contact.updated', 1, updated)).toEqual({ contact: expected, changes: ['fullName', 'tags'] });
    const merged = webhookData('contact.merged', 1, EVENT_EXAMPLES['contact.merged']) as Record<string, Record<string, unknown>>;
    expect(merged.target).toEqual(expected);
    expect(merged.source).toMatchObject({ fullName: 'Ada L.' });
    expect(merged.source.name).toBeUndefined();
  });

  it('other public events go out as published; internal ones have no webhook payload', () => {
    expect(webhookData('message.received', 1, EVENT_EXAMPLES['message.received'])).toEqual(EVENT_EXAMPLES['message.received']);
    expect(() => webhookData('chatnet_account.qr', 1, EVENT_EXAMPLES['chatnet_account.qr'])).toThrow('chatnet_account.qr is not a public event');
    expect(() => webhookData('audit.recorded', 1, EVENT_EXAMPLES['audit.recorded'])).toThrow(InvalidEventDataError);
  });
});

describe('eventCatalogue', () => {
  it('gives every type and version its description and the JSON Schema of its data (the webhook data for public ones)', () => {
    const catalogue = eventCatalogue();
    expect(catalogue.map((e) => `${e.type} v${e.version}`)).toEqual(eventDefinitions().map((d) => `${d.type} v${d.version}`));
    for (const e of catalogue) {
      expect([e.type, e.description.length > 10, e.schema.type, Object.keys(e.schema.properties as object).length > 0]).toEqual([
        e.type,
        true,
        'object',
        true,
      ]);
      expect(e.schema.$schema).toBeUndefined();
    }
    // The JSON Schemas are usable as they are: each example validates against its own, a wrong one does not.
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    for (const e of catalogue) expect([e.type, ajv.validate(e.schema, e.example), ajv.errors ?? null]).toEqual([e.type, true, null]);
    expect(ajv.validate(catalogue.find((e) => e.type === 'contact.deleted')!.schema, { id: 42 })).toBe(false);
    expect(catalogue.filter((e) => e.public).map((e) => e.type)).toEqual(publicEventTypes());
    expect(publicEventTypes()).not.toContain('chatnet_account.qr');
    expect(publicEventTypes()).not.toContain('chatnet.inbound');
    const contact = (
      catalogue.find((e) => e.type === 'contact.created')!.schema.properties as Record<string, { properties: object; required: string[] }>
    ).contact;
    expect(Object.keys(contact.properties)).toEqual(Object.keys(PublicContact.shape));
    expect(contact.required).toContain('fullName');
  });
});
