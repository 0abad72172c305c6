import { eventually } from '@crm/testing';
import { Client } from '../support/http';
import { CrmStack, listenEvents, Org, startCrmStack } from './crm-support';

// dealValue on contacts: set on create, changed on update (only when sent), validated (400 naming dealValue),
// read back on the detail, the list and customer-list members, and carried by contact.created/updated.
describe('contact dealValue', () => {
  let crm: CrmStack;
  let acme: Org;
  let globex: Org;
  let owner: Client;
  let events: Awaited<ReturnType<typeof listenEvents>>;

  beforeAll(async () => {
    crm = await startCrmStack();
    events = await listenEvents(crm.exchange, ['contact.*']);
    acme = await crm.newOrg('Acme');
    globex = await crm.newOrg('Globex');
    owner = acme.owner;
  });
  afterAll(async () => {
    await events?.close();
    await crm?.stop();
  });

  const ofType = (type: string, pred: (data: any) => boolean) => eventually(async () => events.find((e) => e.type === type && pred(e.data)), 10_000);

  it('defaults to 0 and is stored with 2 decimals exactly', async () => {
    const plain = await owner.post('/api/v1/contacts', { name: 'No Deal' });
    expect(plain.status).toBe(201);
    expect(plain.body.dealValue).toBe(0);

    const big = await owner.post('/api/v1/contacts', { name: 'Big Deal', dealValue: 1234567.89 });
    expect(big.status).toBe(201);
    expect(big.body.dealValue).toBe(1234567.89);
    const detail = await owner.get(`/api/v1/contacts/${big.body.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.dealValue).toBe(1234567.89);
    const listed = await owner.get('/api/v1/contacts?search=Big%20Deal');
    expect(listed.body.data.map((c: { id: string; dealValue: number }) => [c.id, c.dealValue])).toEqual([[big.body.id, 1234567.89]]);
    // The largest value numeric(14,2) holds.
    const max = await owner.post('/api/v1/contacts', { name: 'Max Deal', dealValue: 999999999999.99 });
    expect(max.status).toBe(201);
    expect(max.body.dealValue).toBe(999999999999.99);
  });

  it('is changed by PUT only when sent, with contact.updated naming it and carrying the new value', async () => {
    const id = (await owner.post('/api/v1/contacts', { name: 'Growing Deal', dealValue: 100 })).body.id;
    const created = await ofType('contact.created', (d) => d.contact.id === id);
    expect(created.data.contact.dealValue).toBe(100);

    const renamed = await owner.put(`/api/v1/contacts/${id}`, { name: 'Growing Deal Co' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.dealValue).toBe(100);

    const raised = await owner.put(`/api/v1/contacts/${id}`, { dealValue: 250.5 });
    expect(raised.status).toBe(200);
    expect(raised.body.dealValue).toBe(250.5);
    const u = await ofType('contact.updated', (d) => d.contact.id === id && d.changes.includes('dealValue'));
    expect(u.data.changes).toEqual(['dealValue']);
    expect(u.data.contact.dealValue).toBe(250.5);

    // The same value again is no change: no event, no activity.
    const same = await owner.put(`/api/v1/contacts/${id}`, { dealValue: 250.5 });
    expect(same.body.dealValue).toBe(250.5);
    const back = await owner.put(`/api/v1/contacts/${id}`, { dealValue: 0 });
    expect(back.body.dealValue).toBe(0);
    await ofType('contact.updated', (d) => d.contact.id === id && d.contact.dealValue === 0);
    expect(events.seen.filter((e) => e.type === 'contact.updated' && e.data.contact.id === id && e.data.changes.includes('dealValue'))).toHaveLength(
      2,
    );
    expect((await owner.get(`/api/v1/contacts/${id}`)).body.dealValue).toBe(0);
  });

  it('is 400 naming dealValue when negative, not a number, over the limit or with more than 2 decimals', async () => {
    const id = (await owner.post('/api/v1/contacts', { name: 'Valid Deal', dealValue: 10 })).body.id;
    for (const dealValue of [-1, -0.01, '12', 1.234, 1e12, true, null]) {
      const created = await owner.post('/api/v1/contacts', { name: 'Bad Deal', dealValue });
      expect([dealValue, created.status]).toEqual([dealValue, 400]);
      expect(created.body.error.details.map((d: { field: string }) => d.field)).toEqual(['dealValue']);
      const updated = await owner.put(`/api/v1/contacts/${id}`, { dealValue });
      expect([dealValue, updated.status]).toEqual([dealValue, 400]);
      expect(updated.body.error.details.map((d: { field: string }) => d.field)).toEqual(['dealValue']);
    }
    expect((await owner.get(`/api/v1/contacts/${id}`)).body.dealValue).toBe(10);
  });

  it('shows on customer-list members, and another org cannot change it (404)', async () => {
    const id = (await owner.post('/api/v1/contacts', { name: 'Listed Deal', dealValue: 42.42 })).body.id;
    const list = await owner.post('/api/v1/customer-lists', {
      name: 'Listed',
      criteria: { filters: [{ field: 'name', operator: 'equals', value: 'Listed Deal' }] },
    });
    const members = await owner.get(`/api/v1/customer-lists/${list.body.id}/members`);
    expect(members.body.data.map((c: { id: string; dealValue: number }) => [c.id, c.dealValue])).toEqual([[id, 42.42]]);
    expect((await globex.owner.put(`/api/v1/contacts/${id}`, { dealValue: 1 })).status).toBe(404);
    expect((await owner.get(`/api/v1/contacts/${id}`)).body.dealValue).toBe(42.42);
  });
});
