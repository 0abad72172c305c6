import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import { auditEntryFor } from '../support/audit';
import type { Client } from '../support/http';
import { addUser, CrmStack, listenEvents, Org, publicClient, startCrmStack } from './crm-support';

// Custom contact fields (issue #15): the org's typed definitions (/api/v1/contact-fields), contacts' customFields
// checked by type, cf.<key> filters on the list, and customFields in the public API and contact events (webhooks).
describe('custom contact fields', () => {
  let crm: CrmStack;
  let acme: Org;
  let globex: Org;
  let owner: Client;
  let agent: Client;
  let events: Awaited<ReturnType<typeof listenEvents>>;
  const ids: Record<string, string> = {};

  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;
  const create = (as: Client, body: object) => as.post('/api/v1/contact-fields', body);

  beforeAll(async () => {
    crm = await startCrmStack();
    acme = await crm.newOrg('Acme');
    globex = await crm.newOrg('Globex');
    owner = acme.owner;
    agent = (await addUser(crm.api, owner, 'agent')).as;
    events = await listenEvents(crm.exchange, ['contact.*']);
  }, 60_000);
  afterAll(async () => {
    await events?.close();
    await crm?.stop();
  });

  describe('definitions', () => {
    it('POST creates one field per type (201); GET lists them by position then key', async () => {
      const specs = [
        { key: 'tier', label: 'Tier', type: 'select', options: ['Gold', 'Silver'], position: 1 },
        { key: 'score', label: 'Score', type: 'number' },
        { key: 'birthday', label: 'Birthday', type: 'date' },
        { key: 'vip', label: 'VIP', type: 'boolean' },
        { key: 'nickname', label: 'Nickname', type: 'text' },
      ];
      for (const spec of specs) {
        const res = await create(owner, spec);
        expect(res.status).toBe(201);
        expect(res.body).toEqual({
          id: expect.any(String),
          key: spec.key,
          label: spec.label,
          type: spec.type,
          options: spec.options ?? [],
          position: spec.position ?? 0,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
        });
        ids[spec.key] = res.body.id;
      }
      const list = await owner.get('/api/v1/contact-fields');
      expect(list.status).toBe(200);
      expect(list.body.map((f: { key: string }) => f.key)).toEqual(['birthday', 'nickname', 'score', 'vip', 'tier']);
      expect((await agent.get(`/api/v1/contact-fields/${ids.tier}`)).body.options).toEqual(['Gold', 'Silver']);
    });

    it('POST is 400 naming key, label, type or options; 409 for a key the org already has', async () => {
      for (const key of ['Bad Key', '1abc', 'a'.repeat(41), 'with-dash', '']) {
        const res = await create(owner, { key, label: 'X', type: 'text' });
        expect([res.status, fieldOf(res)]).toEqual([400, 'key']);
      }
      expect(fieldOf(await create(owner, { key: 'x1', type: 'text' }))).toBe('label');
      expect(fieldOf(await create(owner, { key: 'x1', label: 'X', type: 'color' }))).toBe('type');
      expect(fieldOf(await create(owner, { key: 'x1', label: 'X', type: 'select' }))).toBe('options');
      expect(fieldOf(await create(owner, { key: 'x1', label: 'X', type: 'select', options: ['a', 'A'] }))).toBe('options');
      expect(fieldOf(await create(owner, { key: 'x1', label: 'X', type: 'text', options: ['a'] }))).toBe('options');
      const taken = await create(owner, { key: 'tier', label: 'Again', type: 'text' });
      expect([taken.status, taken.body.error.code, fieldOf(taken)]).toEqual([409, 'field_key_taken', 'key']);
      // Keys are per organization.
      expect((await create(globex.owner, { key: 'tier', label: 'Their tier', type: 'text' })).status).toBe(201);
    });

    it('PUT changes label, options and position; key and type are fixed (400)', async () => {
      const res = await owner.put(`/api/v1/contact-fields/${ids.tier}`, {
        label: 'Customer tier',
        options: ['Gold', 'Silver', 'Bronze'],
        position: 2,
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        expect.objectContaining({ key: 'tier', label: 'Customer tier', type: 'select', options: ['Gold', 'Silver', 'Bronze'], position: 2 }),
      );
      const type = await owner.put(`/api/v1/contact-fields/${ids.tier}`, { type: 'text' });
      expect([type.status, fieldOf(type)]).toEqual([400, 'type']);
      const key = await owner.put(`/api/v1/contact-fields/${ids.tier}`, { key: 'level' });
      expect([key.status, fieldOf(key)]).toEqual([400, 'key']);
      expect(fieldOf(await owner.put(`/api/v1/contact-fields/${ids.score}`, { options: ['1'] }))).toBe('options');
    });

    it('writes need admin or owner (403 for an agent); every route needs a token (401)', async () => {
      expect((await create(agent, { key: 'agent_field', label: 'A', type: 'text' })).status).toBe(403);
      expect((await agent.put(`/api/v1/contact-fields/${ids.tier}`, { label: 'Mine' })).status).toBe(403);
      expect((await agent.del(`/api/v1/contact-fields/${ids.tier}`)).status).toBe(403);
      expect((await agent.get('/api/v1/contact-fields')).status).toBe(200);
      expect((await crm.api.get('/api/v1/contact-fields')).status).toBe(401);
      expect((await crm.api.post('/api/v1/contact-fields', { key: 'x', label: 'X', type: 'text' })).status).toBe(401);
    });

    it("another org's, unknown and malformed ids are 404", async () => {
      for (const id of [ids.tier, randomUUID(), 'nope']) {
        expect((await globex.owner.get(`/api/v1/contact-fields/${id}`)).status).toBe(404);
        expect((await globex.owner.put(`/api/v1/contact-fields/${id}`, { label: 'Theirs' })).status).toBe(404);
        expect((await globex.owner.del(`/api/v1/contact-fields/${id}`)).status).toBe(404);
      }
      expect((await owner.get(`/api/v1/contact-fields/${ids.tier}`)).body.label).toBe('Customer tier');
    });
  });

  describe('contact values', () => {
    let contactId: string;

    it('POST /contacts stores typed values; the contact, its events and the public API show them', async () => {
      const customFields = { tier: 'gold', score: 12.5, birthday: '1990-02-28', vip: true, nickname: '  Ace  ' };
      const res = await owner.post('/api/v1/contacts', { name: 'Typed Tran', phone: '0912 345 001', customFields });
      expect(res.status).toBe(201);
      // select values take the option's spelling; text is trimmed
      const stored = { tier: 'Gold', score: 12.5, birthday: '1990-02-28', vip: true, nickname: 'Ace' };
      expect(res.body.customFields).toEqual(stored);
      contactId = res.body.id;
      expect((await owner.get(`/api/v1/contacts/${contactId}`)).body.customFields).toEqual(stored);

      const created = await eventually(async () => events.find((e) => e.type === 'contact.created' && e.data.contact.id === contactId));
      expect(created.data.contact.customFields).toEqual(stored);
      expect(created.data.contact).not.toHaveProperty('customFieldsJson');

      const pub = await publicClient(crm.api, owner);
      const one = await pub.get(`/api/public/contacts/${contactId}`);
      expect(one.body.customFields).toEqual(stored);
      const made = await pub.post('/api/public/contacts', { fullName: 'Public Phan', customFields: { vip: false } });
      expect([made.status, made.body.customFields]).toEqual([201, { vip: false }]);
      const bad = await pub.post('/api/public/contacts', { fullName: 'Public Phan', customFields: { vip: 'no' } });
      expect([bad.status, fieldOf(bad)]).toEqual([400, 'customFields.vip']);
    });

    it.each([
      ['a number as text', 'score', '12'],
      ['a boolean', 'score', true],
      ['a date that does not exist', 'birthday', '1990-02-30'],
      ['another date format', 'birthday', '28/02/1990'],
      ['text for a boolean', 'vip', 'yes'],
      ['a value that is not an option', 'tier', 'Purple'],
      ['text over 1000 characters', 'nickname', 'x'.repeat(1001)],
      ['a number for text', 'nickname', 7],
      ['a key the org has not defined', 'unknown_key', 'x'],
    ])('POST and PUT are 400 naming customFields.<key> for %s', async (_what, key, value) => {
      const post = await owner.post('/api/v1/contacts', { name: 'Bad Bui', customFields: { [key]: value } });
      expect([post.status, fieldOf(post)]).toEqual([400, `customFields.${key}`]);
      const put = await owner.put(`/api/v1/contacts/${contactId}`, { customFields: { [key]: value } });
      expect([put.status, fieldOf(put)]).toEqual([400, `customFields.${key}`]);
    });

    it('customFields must be an object; another org’s keys are unknown here', async () => {
      expect(fieldOf(await owner.post('/api/v1/contacts', { name: 'X', customFields: ['a'] }))).toBe('customFields');
      const theirs = await globex.owner.post('/api/v1/contacts', { name: 'X', customFields: { score: 1 } });
      expect([theirs.status, fieldOf(theirs)]).toEqual([400, 'customFields.score']);
    });

    it('PUT merges: keys sent change, null removes one, the rest stay; contact.updated names customFields', async () => {
      const res = await owner.put(`/api/v1/contacts/${contactId}`, { customFields: { score: -3, nickname: null } });
      expect(res.status).toBe(200);
      expect(res.body.customFields).toEqual({ vip: true, tier: 'Gold', score: -3, birthday: '1990-02-28' });
      await eventually(async () =>
        events.find(
          (e) =>
            e.type === 'contact.updated' &&
            e.data.contact.id === contactId &&
            e.data.changes.includes('customFields') &&
            e.data.contact.customFields.score === -3,
        ),
      );
      // The same values again change nothing (no event, no activity).
      const before = (await owner.get(`/api/v1/contacts/${contactId}`)).body.updatedAt;
      await owner.put(`/api/v1/contacts/${contactId}`, { customFields: { score: -3 } });
      expect((await owner.get(`/api/v1/contacts/${contactId}`)).body.updatedAt).toBe(before);
    });
  });

  describe('cf.<key> filters on GET /contacts', () => {
    const names = (res: { body: any }) => res.body.data.map((c: { name: string }) => c.name).sort();

    beforeAll(async () => {
      await owner.post('/api/v1/contacts', { name: 'Filter Gold', customFields: { tier: 'Gold', score: 10, vip: false, birthday: '2000-01-01' } });
      await owner.post('/api/v1/contacts', { name: 'Filter Silver', customFields: { tier: 'Silver', score: 10.0, vip: true } });
      await owner.post('/api/v1/contacts', { name: 'Filter None' });
      await globex.owner.post('/api/v1/contacts', { name: 'Their Gold', customFields: { tier: 'Gold' } });
    });

    it('match exactly and by type (select case-insensitively, numbers by value, booleans, dates), combined with AND', async () => {
      expect(names(await owner.get('/api/v1/contacts?cf.tier=gold&search=Filter'))).toEqual(['Filter Gold']);
      expect(names(await owner.get('/api/v1/contacts?cf.score=10&search=Filter'))).toEqual(['Filter Gold', 'Filter Silver']);
      expect(names(await owner.get('/api/v1/contacts?cf.score=10.00&cf.vip=true&search=Filter'))).toEqual(['Filter Silver']);
      expect(names(await owner.get('/api/v1/contacts?cf.birthday=2000-01-01'))).toEqual(['Filter Gold']);
      const res = await owner.get('/api/v1/contacts?cf.tier=Gold');
      expect(res.body.pagination.total).toBe(res.body.data.length);
      expect(names(res)).toEqual(['Filter Gold', 'Typed Tran']);
    });

    it('is 400 naming cf.<key> for an unknown key or a value of the wrong type', async () => {
      for (const [q, field] of [
        ['cf.nope=1', 'cf.nope'],
        ['cf.score=ten', 'cf.score'],
        ['cf.vip=maybe', 'cf.vip'],
        ['cf.birthday=2000-13-01', 'cf.birthday'],
        ['cf.tier=Purple', 'cf.tier'],
        ['cf.tier=', 'cf.tier'],
        ['cf.tier=Gold&cf.tier=Silver', 'cf.tier'],
      ]) {
        const res = await owner.get(`/api/v1/contacts?${q}`);
        expect([q, res.status, fieldOf(res)]).toEqual([q, 400, field]);
      }
    });
  });

  it('DELETE removes the definition and its values from every contact (204); the key is then unknown', async () => {
    const withVip = (await owner.post('/api/v1/contacts', { name: 'Vip Vo', customFields: { vip: true, score: 1 } })).body.id;
    expect((await owner.del(`/api/v1/contact-fields/${ids.vip}`)).status).toBe(204);
    expect((await owner.get(`/api/v1/contacts/${withVip}`)).body.customFields).toEqual({ score: 1 });
    expect(fieldOf(await owner.get('/api/v1/contacts?cf.vip=true'))).toBe('cf.vip');
    expect(fieldOf(await owner.post('/api/v1/contacts', { name: 'X', customFields: { vip: true } }))).toBe('customFields.vip');
    expect((await owner.get(`/api/v1/contact-fields/${ids.vip}`)).status).toBe(404);
    const entry = await auditEntryFor(owner, 'contact_field.deleted', ids.vip);
    expect(entry.details).toEqual(expect.objectContaining({ key: 'vip' }));
  });
});
