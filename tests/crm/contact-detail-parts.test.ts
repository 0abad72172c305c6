import { status } from '@crm/grpc-kit';
import { CrmStack, Org, publicClient, startCrmStack } from './crm-support';

// GetContact names the parts a caller wants beside the contact (issue #30 item 4: the gateway stops over-fetching):
// the public API's detail asks for appointments and conversations only, so crm reads no notes and no activity.
describe('GetContact parts', () => {
  let crm: CrmStack;
  let acme: Org;
  let globex: Org;
  let contactId: string;

  beforeAll(async () => {
    crm = await startCrmStack();
    acme = await crm.newOrg('Acme');
    globex = await crm.newOrg('Globex');
    contactId = (await acme.owner.post('/api/v1/contacts', { name: 'Parts Person' })).body.id;
    expect((await acme.owner.post(`/api/v1/contacts/${contactId}/notes`, { content: 'a note' })).status).toBe(201);
    expect((await acme.owner.post('/api/v1/appointments', { contactId, title: 'Demo', scheduledAt: '2031-03-10T09:30:00Z' })).status).toBe(201);
  });
  afterAll(() => crm.stop());

  const ctx = (o: Org) => ({ orgId: o.orgId, userId: o.user.id, role: 'owner' });

  it('no parts named: every part, as before', async () => {
    const d = await crm.crmRpc().GetContact({ id: contactId }, ctx(acme));
    expect(d.contact?.id).toBe(contactId);
    expect(d.notes).toHaveLength(1);
    expect(d.appointments).toHaveLength(1);
    expect(d.activities.length).toBeGreaterThan(0);
  });

  it('only the parts named are read; conversations not asked for are not available', async () => {
    const d = await crm.crmRpc().GetContact({ id: contactId, parts: ['appointments'] }, ctx(acme));
    expect(d).toEqual(expect.objectContaining({ notes: [], activities: [], conversationsAvailable: false }));
    expect(d.appointments).toHaveLength(1);
    const n = await crm.crmRpc().GetContact({ id: contactId, parts: ['notes', 'activities'] }, ctx(acme));
    expect(n.notes).toHaveLength(1);
    expect(n.appointments).toEqual([]);
  });

  it('an unknown part is INVALID_ARGUMENT naming parts; another org’s contact is NOT_FOUND whatever the parts', async () => {
    await expect(crm.crmRpc().GetContact({ id: contactId, parts: ['secrets'] }, ctx(acme))).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
    await expect(crm.crmRpc().GetContact({ id: contactId, parts: ['appointments'] }, ctx(globex))).rejects.toMatchObject({ code: status.NOT_FOUND });
  });

  it('the public detail still shows its appointments', async () => {
    const integration = await publicClient(crm.api, acme.owner);
    const res = await integration.get(`/api/public/contacts/${contactId}`);
    expect(res.status).toBe(200);
    expect(res.body.appointments).toHaveLength(1);
    expect((await (await publicClient(crm.api, globex.owner)).get(`/api/public/contacts/${contactId}`)).status).toBe(404);
  });
});
