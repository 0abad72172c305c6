import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import { addUser, CrmStack, Org, publishEvent, startCrmStack } from './crm-support';

// Contacts under "assigned" inbox visibility: an agent's contact list and detail cover only the contacts assigned to
// them or with a conversation they may see. crm learns conversations, the setting and the accounts' users from
// messaging's events (published here as messaging and the assignment API publish them).
describe('contacts under inbox visibility', () => {
  let crm: CrmStack;
  let acme: Org;
  let agent: Awaited<ReturnType<typeof addUser>>;
  let agent2: Awaited<ReturnType<typeof addUser>>;
  let lead: Awaited<ReturnType<typeof addUser>>;
  const account = randomUUID();
  const otherAccount = randomUUID();
  // own: assignedUserId = agent; viaConv: a conversation assigned to agent; viaAccount: an unassigned conversation
  // on the account listing agent; theirs: a conversation assigned to agent2; elsewhere: unassigned, unlisted account.
  const contact: Record<'own' | 'viaConv' | 'viaAccount' | 'theirs' | 'elsewhere', string> = {} as never;

  const emit = (type: string, data: unknown) => publishEvent(crm.exchange, type, acme.orgId, data);
  const ids = (res: { body: any }) => res.body.data.map((c: any) => c.id).sort();
  const conversation = async (contactId: string, accountId: string, assigneeId: string | null) => {
    const id = randomUUID();
    await emit('conversation.created', { id, contactId, chatnetAccountId: accountId, type: 'user', threadId: `t-${id}` });
    if (assigneeId) await emit('conversation.assigned', { conversationId: id, contactId, assigneeId, teamId: null, previousAssigneeId: null, assignedBy: null });
    return id;
  };

  beforeAll(async () => {
    crm = await startCrmStack();
    acme = await crm.newOrg('Vis Acme');
    agent = await addUser(crm.api, acme.owner, 'agent');
    agent2 = await addUser(crm.api, acme.owner, 'agent');
    lead = await addUser(crm.api, acme.owner, 'team_lead');
    for (const name of Object.keys({ own: 1, viaConv: 1, viaAccount: 1, theirs: 1, elsewhere: 1 }) as (keyof typeof contact)[]) {
      const res = await acme.owner.post('/api/v1/contacts', { name: `Vis ${name}`, ...(name === 'own' ? { assignedUserId: agent.id } : {}) });
      expect(res.status).toBe(201);
      contact[name] = res.body.id;
    }
    await conversation(contact.viaConv, otherAccount, agent.id);
    await conversation(contact.viaAccount, account, null);
    await conversation(contact.theirs, account, agent2.id);
    await conversation(contact.elsewhere, otherAccount, null);
    await emit('chatnet_account.assignment_updated', { chatnetAccountId: account, mode: 'manual', userIds: [agent.id], maxOpenPerUser: null });
  }, 60_000);
  afterAll(() => crm.stop());

  it('under "all" (the default) an agent lists every contact', async () => {
    expect(ids(await agent.as.get('/api/v1/contacts?limit=100'))).toEqual(Object.values(contact).sort());
  });

  it('under "assigned" an agent lists and opens only their contacts; others are 404', async () => {
    await emit('inbox_settings.updated', { agentVisibility: 'assigned' });
    const visible = [contact.own, contact.viaConv, contact.viaAccount].sort();
    // The events before this one may still be in crm's queue: wait for the settled answer.
    await eventually(async () => (JSON.stringify(ids(await agent.as.get('/api/v1/contacts?limit=100'))) === JSON.stringify(visible) ? true : undefined));
    const list = await agent.as.get('/api/v1/contacts?limit=100');
    expect(ids(list)).toEqual(visible);
    expect(list.body.pagination).toEqual(expect.objectContaining({ total: 3 }));
    // Filters and search narrow within what the agent may see.
    expect(ids(await agent.as.get('/api/v1/contacts?search=Vis'))).toEqual(visible);
    for (const id of visible) expect((await agent.as.get(`/api/v1/contacts/${id}`)).status).toBe(200);
    for (const id of [contact.theirs, contact.elsewhere]) {
      const res = await agent.as.get(`/api/v1/contacts/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
  });

  it('team leads and above still see every contact', async () => {
    for (const as of [lead.as, acme.owner]) {
      expect(ids(await as.get('/api/v1/contacts?limit=100'))).toEqual(Object.values(contact).sort());
      expect((await as.get(`/api/v1/contacts/${contact.theirs}`)).status).toBe(200);
    }
  });

  it('follows reassignment and account lists as their events arrive', async () => {
    const conv = await conversation(contact.elsewhere, otherAccount, null);
    await emit('conversation.assigned', { conversationId: conv, contactId: contact.elsewhere, assigneeId: agent.id, teamId: null, previousAssigneeId: null, assignedBy: null });
    await eventually(async () => ((await agent.as.get(`/api/v1/contacts/${contact.elsewhere}`)).status === 200 ? true : undefined));
    // Taken off the account: the unassigned conversation there no longer shows its contact.
    await emit('chatnet_account.assignment_updated', { chatnetAccountId: account, mode: 'manual', userIds: [agent2.id], maxOpenPerUser: null });
    await eventually(async () => ((await agent.as.get(`/api/v1/contacts/${contact.viaAccount}`)).status === 404 ? true : undefined));
    expect((await agent2.as.get(`/api/v1/contacts/${contact.viaAccount}`)).status).toBe(200);
  });

  it('back to "all": agents list every contact again', async () => {
    await emit('inbox_settings.updated', { agentVisibility: 'all' });
    await eventually(async () => ((await agent.as.get('/api/v1/contacts?limit=100')).body.data.length === 5 ? true : undefined));
    expect((await agent.as.get(`/api/v1/contacts/${contact.theirs}`)).status).toBe(200);
  });
});
