import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import { auditEntries } from '../support/audit';
import type { Client } from '../support/http';
import { addUser, CrmStack, listenEvents, Org, startCrmStack } from './crm-support';
import { connectPatiently } from '../support/patient-client';

// POST /api/v1/contacts/bulk: one action (tag, untag, status, assign, delete) over many contacts, with the single
// operations' validation and events per contact, per-id failures for unknown, malformed and other orgs' ids,
// delete for team leads and up, and one audit entry per request.
describe('POST /api/v1/contacts/bulk', () => {
  let crm: CrmStack;
  let acme: Org;
  let globex: Org;
  let owner: Client;
  let agent: { id: string; as: Client };
  let lead: { id: string; as: Client };
  let events: Awaited<ReturnType<typeof listenEvents>>;
  const contacts: string[] = [];
  let foreign: string;

  beforeAll(async () => {
    crm = await startCrmStack();
    acme = await crm.newOrg('Acme');
    globex = await crm.newOrg('Globex');
    owner = acme.owner;
    agent = await addUser(crm.api, owner, 'agent');
    lead = await addUser(crm.api, owner, 'team_lead');
    events = await listenEvents(crm.exchange, ['contact.*']);
    for (const name of ['An', 'Binh', 'Chi', 'Dung']) {
      const res = await owner.post('/api/v1/contacts', { name, tags: name === 'An' ? ['vip'] : [] });
      contacts.push(res.body.id);
    }
    foreign = (await globex.owner.post('/api/v1/contacts', { name: 'Elsewhere', tags: ['keep'] })).body.id;
  }, 60_000);
  afterAll(async () => {
    await events?.close();
    await crm?.stop();
  });

  const bulk = (as: Client, body: object) => as.post('/api/v1/contacts/bulk', body);
  const fieldOf = (res: { body: any }) => res.body.error?.details?.[0]?.field;
  const contact = async (id: string) => (await owner.get(`/api/v1/contacts/${id}`)).body;
  const updatedEvents = (ids: string[], field: string) =>
    events.seen.filter((e) => e.type === 'contact.updated' && ids.includes(e.data.contact.id) && e.data.changes.includes(field));
  /** The audit entry of one request: the entry of the action whose ids are exactly these. */
  const auditOf = (action: string, ids: string[]) =>
    eventually(async () => (await auditEntries(owner, action)).find((e) => [...e.details.ids].sort().join() === [...ids].sort().join()), 15_000, 100);

  it('tag: adds tags to each contact (kept once, case-insensitively), one contact.updated each, one audit entry', async () => {
    const ids = contacts.slice(0, 2);
    const res = await bulk(agent.as, { ids, action: 'tag', tags: ['VIP', 'hanoi'] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ updated: 2, failed: [] });
    expect((await contact(ids[0])).tags).toEqual(['vip', 'hanoi']);
    expect((await contact(ids[1])).tags).toEqual(['VIP', 'hanoi']);
    await eventually(async () => updatedEvents(ids, 'tags').length === 2 || undefined);
    const entry = await auditOf('contacts.bulk_tag', ids);
    expect(entry).toEqual(expect.objectContaining({ actorId: agent.id, actorType: 'user', resourceType: 'contact', resourceId: null }));
    expect(entry.details).toEqual(
      expect.objectContaining({ requested: 2, updated: 2, failed: 0, failedIds: [], params: { tags: ['VIP', 'hanoi'] } }),
    );
  });

  it("partial failure: another org's, unknown and malformed ids fail with not_found and are never touched; repeated ids count once", async () => {
    const unknown = randomUUID();
    const res = await bulk(agent.as, {
      ids: [contacts[0], contacts[0].toUpperCase(), foreign, unknown, 'nope'],
      action: 'untag',
      tags: ['hanoi', 'keep'],
    });
    expect(res.status).toBe(200);
    expect(res.body.updated).toBe(1);
    expect([...res.body.failed].sort((x: any, y: any) => x.id.localeCompare(y.id))).toEqual(
      [
        { id: foreign, code: 'not_found' },
        { id: unknown, code: 'not_found' },
        { id: 'nope', code: 'not_found' },
      ].sort((x, y) => x.id.localeCompare(y.id)),
    );
    expect((await contact(contacts[0])).tags).toEqual(['vip']);
    expect((await globex.owner.get(`/api/v1/contacts/${foreign}`)).body.tags).toEqual(['keep']);
    const entry = await auditOf('contacts.bulk_untag', [contacts[0]]);
    expect(entry.details).toEqual(expect.objectContaining({ requested: 4, updated: 1, failed: 3 }));
  });

  it('tag: a contact that would pass 50 tags fails alone with invalid_argument', async () => {
    const full = (await owner.post('/api/v1/contacts', { name: 'Full', tags: Array.from({ length: 50 }, (_, i) => `t${i}`) })).body.id;
    const res = await bulk(agent.as, { ids: [full, contacts[3]], action: 'tag', tags: ['one-more'] });
    expect(res.body).toEqual({ updated: 1, failed: [{ id: full, code: 'invalid_argument' }] });
    expect((await contact(full)).tags).toHaveLength(50);
    expect((await contact(contacts[3])).tags).toEqual(['one-more']);
  });

  it("status: a built-in status and the org's custom statuses; 400 naming status / statusId otherwise", async () => {
    const ids = contacts.slice(1, 3);
    const hot = (await owner.post('/api/v1/contact-statuses', { name: 'Hot' })).body.id;
    const res = await bulk(agent.as, { ids, action: 'status', status: 'lead', statusId: hot });
    expect(res.body).toEqual({ updated: 2, failed: [] });
    for (const id of ids) expect(await contact(id)).toEqual(expect.objectContaining({ status: 'lead', statusId: hot }));
    await eventually(async () => updatedEvents(ids, 'statusId').length === 2 || undefined);
    const cleared = await bulk(agent.as, { ids, action: 'status', statusId: null });
    expect(cleared.body.updated).toBe(2);
    expect((await contact(ids[0])).statusId).toBeNull();

    const otherOrgs = (await globex.owner.post('/api/v1/contact-statuses', { name: 'Theirs' })).body.id;
    const foreignStatus = await bulk(agent.as, { ids, action: 'status', statusId: otherOrgs });
    expect([foreignStatus.status, fieldOf(foreignStatus)]).toEqual([400, 'statusId']);
    const badStatus = await bulk(agent.as, { ids, action: 'status', status: 'hot' });
    expect([badStatus.status, fieldOf(badStatus)]).toEqual([400, 'status']);
    const none = await bulk(agent.as, { ids, action: 'status' });
    expect([none.status, fieldOf(none)]).toEqual([400, 'status']);
  });

  it('assign: an active user of the org, or null; 400 naming assignedUserId for a missing, unknown or other-org user', async () => {
    const ids = contacts.slice(0, 3);
    const res = await bulk(agent.as, { ids, action: 'assign', assignedUserId: lead.id });
    expect(res.body).toEqual({ updated: 3, failed: [] });
    for (const id of ids) expect((await contact(id)).assignedUserId).toBe(lead.id);
    await eventually(async () => updatedEvents(ids, 'assignedUserId').length === 3 || undefined);
    expect((await bulk(agent.as, { ids: [contacts[0]], action: 'assign', assignedUserId: null })).body.updated).toBe(1);
    expect((await contact(contacts[0])).assignedUserId).toBeNull();

    const missing = await bulk(agent.as, { ids, action: 'assign' });
    expect([missing.status, fieldOf(missing)]).toEqual([400, 'assignedUserId']);
    const unknown = await bulk(agent.as, { ids, action: 'assign', assignedUserId: randomUUID() });
    expect([unknown.status, fieldOf(unknown)]).toEqual([400, 'assignedUserId']);
    const globexUser = (await addUser(crm.api, globex.owner, 'agent')).id;
    const other = await bulk(agent.as, { ids, action: 'assign', assignedUserId: globexUser });
    expect([other.status, fieldOf(other)]).toEqual([400, 'assignedUserId']);
    expect((await contact(contacts[1])).assignedUserId).toBe(lead.id);
  });

  it('delete: 403 for agents (nothing deleted); team leads delete, one contact.deleted each, one audit entry', async () => {
    const ids = [contacts[2], contacts[3]];
    const refused = await bulk(agent.as, { ids, action: 'delete' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('permission_denied');
    expect((await owner.get(`/api/v1/contacts/${ids[0]}`)).status).toBe(200);

    const res = await bulk(lead.as, { ids: [...ids, foreign], action: 'delete' });
    expect(res.body).toEqual({ updated: 2, failed: [{ id: foreign, code: 'not_found' }] });
    for (const id of ids) expect((await owner.get(`/api/v1/contacts/${id}`)).status).toBe(404);
    expect((await globex.owner.get(`/api/v1/contacts/${foreign}`)).status).toBe(200);
    await eventually(async () => events.seen.filter((e) => e.type === 'contact.deleted' && ids.includes(e.data.id)).length === 2 || undefined);
    const entry = await auditOf('contacts.bulk_delete', ids);
    expect(entry).toEqual(expect.objectContaining({ actorId: lead.id }));
  });

  it('400 naming ids for none, 1,001 or a non-array; naming action for a missing or unknown one; naming tags when empty', async () => {
    const tooMany = await bulk(owner, { ids: Array.from({ length: 1001 }, () => randomUUID()), action: 'tag', tags: ['x'] });
    expect([tooMany.status, fieldOf(tooMany)]).toEqual([400, 'ids']);
    const empty = await bulk(owner, { ids: [], action: 'delete' });
    expect([empty.status, fieldOf(empty)]).toEqual([400, 'ids']);
    const notArray = await bulk(owner, { ids: contacts[0], action: 'delete' });
    expect([notArray.status, fieldOf(notArray)]).toEqual([400, 'ids']);
    const noAction = await bulk(owner, { ids: [contacts[0]] });
    expect([noAction.status, fieldOf(noAction)]).toEqual([400, 'action']);
    const unknown = await bulk(owner, { ids: [contacts[0]], action: 'merge' });
    expect([unknown.status, fieldOf(unknown)]).toEqual([400, 'action']);
    const noTags = await bulk(owner, { ids: [contacts[0]], action: 'tag', tags: [] });
    expect([noTags.status, fieldOf(noTags)]).toEqual([400, 'tags']);
    const missingTags = await bulk(owner, { ids: [contacts[0]], action: 'untag' });
    expect([missingTags.status, fieldOf(missingTags)]).toEqual([400, 'tags']);
  });

  it('1,000 contacts in one request: processed within seconds, one contact.updated each', async () => {
    const db = await connectPatiently(crm.stack.databaseUrl('crm'));
    const ids = Array.from({ length: 1000 }, () => randomUUID());
    try {
      await db.query(`INSERT INTO contacts (id, org_id, name) SELECT id, $2, 'Bulk ' || ord FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, ord)`, [
        ids,
        acme.orgId,
      ]);
    } finally {
      await db.end();
    }
    const started = Date.now();
    const res = await bulk(owner, { ids, action: 'tag', tags: ['imported'] });
    const took = Date.now() - started;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ updated: 1000, failed: [] });
    expect(took).toBeLessThan(15_000);
    const tagged = await owner.get('/api/v1/contacts?tag=imported&limit=1');
    expect(tagged.body.pagination.total).toBe(1000);
    await eventually(async () => updatedEvents(ids, 'tags').length === 1000 || undefined, 30_000, 200);
    const entry = await auditOf('contacts.bulk_tag', ids);
    expect(entry.details).toEqual(expect.objectContaining({ requested: 1000, updated: 1000, failed: 0 }));
  }, 60_000);
});
