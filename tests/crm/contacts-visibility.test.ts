import { randomUUID } from 'node:crypto';
import { eventually } from '@crm/testing';
import { addUser, CrmStack, Org, publicClient, publishEvent, startCrmStack } from './crm-support';

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
    if (assigneeId)
      await emit('conversation.assigned', {
        conversationId: id,
        contactId,
        chatnetAccountId: accountId,
        assigneeId,
        teamId: null,
        previousAssigneeId: null,
        assignedBy: null,
      });
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
    await eventually(async () =>
      JSON.stringify(ids(await agent.as.get('/api/v1/contacts?limit=100'))) === JSON.stringify(visible) ? true : undefined,
    );
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

  it('under "assigned" contacts opened at once (a batch of calls, read in one query) keep each caller\'s own view', async () => {
    const visible = [contact.own, contact.viaConv, contact.viaAccount];
    const hidden = [contact.theirs, contact.elsewhere];
    for (let round = 0; round < 3; round++) {
      const asked = [
        ...[...visible, ...hidden].map((id) => ({ as: agent.as, id, status: visible.includes(id) ? 200 : 404 })),
        // agent2 sees only the conversation assigned to them; the owner and the lead see all of them.
        ...[contact.theirs, contact.own].map((id) => ({ as: agent2.as, id, status: id === contact.theirs ? 200 : 404 })),
        ...hidden.map((id) => ({ as: acme.owner, id, status: 200 })),
        { as: lead.as, id: contact.elsewhere, status: 200 },
      ];
      const answers = await Promise.all(asked.map((a) => a.as.get(`/api/v1/contacts/${a.id}`)));
      expect(answers.map((r) => r.status)).toEqual(asked.map((a) => a.status));
      answers.forEach((r, i) => r.status === 200 && expect(r.body.id).toBe(asked[i].id));
    }
  });

  it('under "assigned" a customer list shows an agent only the members they may see (issue #27)', async () => {
    const created = await acme.owner.post('/api/v1/customer-lists', {
      name: 'Every Vis contact',
      criteria: { filters: [{ field: 'name', operator: 'contains', value: 'Vis ' }] },
    });
    expect(created.status).toBe(201);
    const members = await agent.as.get(`/api/v1/customer-lists/${created.body.id}/members?limit=100`);
    expect(members.status).toBe(200);
    expect(ids(members)).toEqual([contact.own, contact.viaConv, contact.viaAccount].sort());
    expect(members.body.pagination.total).toBe(3);
    const all = await lead.as.get(`/api/v1/customer-lists/${created.body.id}/members?limit=100`);
    expect(ids(all)).toEqual(Object.values(contact).sort());
  });

  it('team leads and above still see every contact', async () => {
    for (const as of [lead.as, acme.owner]) {
      expect(ids(await as.get('/api/v1/contacts?limit=100'))).toEqual(Object.values(contact).sort());
      expect((await as.get(`/api/v1/contacts/${contact.theirs}`)).status).toBe(200);
    }
  });

  it('under "assigned" every contact route answers 404 for a hidden contact and works for a visible one', async () => {
    const hidden = contact.theirs;
    const visible = contact.viaAccount;
    const notFound = (res: { status: number; body: any }) => {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    };
    notFound(await agent.as.put(`/api/v1/contacts/${hidden}`, { name: 'Taken' }));
    notFound(await agent.as.post(`/api/v1/contacts/${hidden}/notes`, { content: 'hidden note' }));
    notFound(await agent.as.get(`/api/v1/contacts/${hidden}/friends`));
    notFound(await agent.as.get(`/api/v1/contacts/${hidden}/scores`));
    notFound(await agent.as.post('/api/v1/appointments', { contactId: hidden, title: 'Visit', scheduledAt: '2030-01-01T10:00:00Z' }));
    // Nothing changed behind the 404s.
    const untouched = await acme.owner.get(`/api/v1/contacts/${hidden}`);
    expect(untouched.body.name).toBe('Vis theirs');
    expect(untouched.body.notes).toEqual([]);

    const put = await agent.as.put(`/api/v1/contacts/${visible}`, { name: 'Vis viaAccount renamed' });
    expect(put.status).toBe(200);
    expect(put.body.name).toBe('Vis viaAccount renamed');
    expect((await agent.as.post(`/api/v1/contacts/${visible}/notes`, { content: 'visible note' })).status).toBe(201);
    expect((await agent.as.get(`/api/v1/contacts/${visible}/friends`)).status).toBe(200);
    expect((await agent.as.get(`/api/v1/contacts/${visible}/scores`)).status).toBe(200);
    const made = await agent.as.post('/api/v1/appointments', { contactId: visible, title: 'Visit', scheduledAt: '2030-01-01T10:00:00Z' });
    expect(made.status).toBe(201);
    expect((await agent.as.get(`/api/v1/appointments/${made.body.id}`)).status).toBe(200);
  });

  it('under "assigned" an agent neither lists nor opens nor changes the appointments of a hidden contact', async () => {
    const theirs = await acme.owner.post('/api/v1/appointments', { contactId: contact.theirs, title: 'Visit', scheduledAt: '2030-02-01T10:00:00Z' });
    expect(theirs.status).toBe(201);
    const listed = (await agent.as.get('/api/v1/appointments?limit=100')).body.data.map((a: any) => a.contactId);
    expect(listed).not.toContain(contact.theirs);
    expect(listed).toContain(contact.viaAccount);
    expect((await agent.as.get(`/api/v1/appointments?contactId=${contact.theirs}`)).body.data).toEqual([]);
    expect((await agent.as.get(`/api/v1/appointments/${theirs.body.id}`)).status).toBe(404);
    expect((await agent.as.put(`/api/v1/appointments/${theirs.body.id}`, { status: 'cancelled' })).status).toBe(404);
    expect((await acme.owner.get(`/api/v1/appointments/${theirs.body.id}`)).body.status).toBe('scheduled');
    // A team lead still sees and changes them.
    expect((await lead.as.get('/api/v1/appointments?limit=100')).body.data.map((a: any) => a.contactId)).toContain(contact.theirs);
    expect((await lead.as.put(`/api/v1/appointments/${theirs.body.id}`, { title: 'Lead call' })).status).toBe(200);
  });

  it('under "assigned" a bulk action fails hidden ids as not_found and applies to the visible ones', async () => {
    const res = await agent.as.post('/api/v1/contacts/bulk', {
      ids: [contact.own, contact.theirs, contact.elsewhere],
      action: 'tag',
      tags: ['vis-bulk'],
    });
    expect(res.status).toBe(200);
    expect(res.body.updated).toBe(1);
    expect(res.body.failed).toEqual(
      expect.arrayContaining([
        { id: contact.theirs, code: 'not_found' },
        { id: contact.elsewhere, code: 'not_found' },
      ]),
    );
    expect(res.body.failed).toHaveLength(2);
    const tagsOf = async (id: string) => (await acme.owner.get(`/api/v1/contacts/${id}`)).body.tags;
    expect(await tagsOf(contact.own)).toContain('vis-bulk');
    expect(await tagsOf(contact.theirs)).not.toContain('vis-bulk');
    // The team lead's bulk covers every contact of the org.
    const byLead = await lead.as.post('/api/v1/contacts/bulk', { ids: [contact.theirs], action: 'tag', tags: ['vis-bulk'] });
    expect(byLead.body).toEqual({ updated: 1, failed: [] });
  });

  it('team leads and API keys change a contact hidden from agents', async () => {
    expect((await lead.as.put(`/api/v1/contacts/${contact.theirs}`, { name: 'Vis theirs' })).status).toBe(200);
    expect((await lead.as.post(`/api/v1/contacts/${contact.theirs}/notes`, { content: 'lead note' })).status).toBe(201);
    const integration = await publicClient(crm.api, acme.owner);
    const res = await integration.put(`/api/public/contacts/${contact.theirs}`, { fullName: 'Vis theirs' });
    expect(res.status).toBe(200);
  });

  it("messaging's one-time owners snapshot fills conversations crm never heard of, and never undoes a newer assignment", async () => {
    const old = await acme.owner.post('/api/v1/contacts', { name: 'Vis from before' });
    expect(old.status).toBe(201);
    expect((await agent.as.get(`/api/v1/contacts/${old.body.id}`)).status).toBe(404);
    // theirs: crm knows its conversation is agent2's; a stale snapshot row saying "agent" must not win.
    const theirsConversation = randomUUID();
    await emit('conversation.created', {
      id: theirsConversation,
      contactId: contact.theirs,
      chatnetAccountId: otherAccount,
      type: 'user',
      threadId: `t-${theirsConversation}`,
    });
    await emit('conversation.assigned', {
      conversationId: theirsConversation,
      contactId: contact.theirs,
      chatnetAccountId: otherAccount,
      assigneeId: agent2.id,
      teamId: null,
      previousAssigneeId: null,
      assignedBy: null,
    });
    await emit('conversation.owners_snapshot', {
      conversations: [
        { conversationId: randomUUID(), contactId: old.body.id, chatnetAccountId: otherAccount, assigneeId: agent.id },
        { conversationId: theirsConversation, contactId: contact.theirs, chatnetAccountId: otherAccount, assigneeId: agent.id },
      ],
    });
    await eventually(async () => ((await agent.as.get(`/api/v1/contacts/${old.body.id}`)).status === 200 ? true : undefined));
    expect((await agent.as.get(`/api/v1/contacts/${contact.theirs}`)).status).toBe(404);
    expect((await agent.as.get(`/api/v1/contacts/${contact.elsewhere}`)).status).toBe(404);
    expect((await acme.owner.del(`/api/v1/contacts/${old.body.id}`)).status).toBe(204);
  });

  it('follows reassignment and account lists as their events arrive', async () => {
    const conv = await conversation(contact.elsewhere, otherAccount, null);
    await emit('conversation.assigned', {
      conversationId: conv,
      contactId: contact.elsewhere,
      chatnetAccountId: otherAccount,
      assigneeId: agent.id,
      teamId: null,
      previousAssigneeId: null,
      assignedBy: null,
    });
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
