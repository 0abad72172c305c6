import { io as connect, Socket } from 'socket.io-client';
import { eventually } from '@crm/testing';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { member, org } from './support';

// With the real crm service: contacts created through the gateway start automation rules, and
// automation's actions change the contact in crm. Notifications are pushed live over socket.io.
describe('automation with crm, through the gateway', () => {
  let stack: Stack;
  let owner: Client;
  let agent: Client;
  let agentId: string;
  let agentToken: string;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    stack = await startStack({ services: ['crm', 'automation'], serviceEnv: { automation: { RUN_POLL_MS: '100' } } });
    const a = await org(stack, 'Acme');
    owner = a.owner;
    const m = await member(stack, owner, 'agent');
    agent = m.api;
    agentId = m.id;
    agentToken = m.token;
  });
  afterAll(async () => {
    sockets.forEach((s) => s.disconnect());
    await stack?.stop();
  });

  it('a contact_created rule with a condition and send_notification produces a notification when POST /contacts creates a matching contact', async () => {
    const rule = await owner.post('/api/v1/automation/rules', {
      name: 'Website leads',
      type: 'sequence',
      trigger: { type: 'contact_created', conditions: [{ field: 'source', operator: 'equals', value: 'website' }] },
      actions: [{ type: 'send_notification', template: 'New website lead {{name}} ({{email}})', title: 'New lead', notificationType: 'new_lead' }],
    });
    expect(rule.status).toBe(201);
    expect((await owner.post(`/api/v1/automation/rules/${rule.body.id}/activate`)).body.status).toBe('active');

    const other = await owner.post('/api/v1/contacts', { name: 'Walk In', phone: '+84900000002', source: 'manual' });
    expect(other.status).toBe(201);
    const contact = await owner.post('/api/v1/contacts', {
      name: 'Thu Hà',
      email: 'ha@example.test',
      phone: '+84900000003',
      source: 'website',
      status: 'lead',
    });
    expect(contact.status).toBe(201);

    const note = await eventually(async () => (await owner.get('/api/v1/notifications')).body.data.find((n: any) => n.type === 'new_lead'));
    expect(note).toEqual(
      expect.objectContaining({ title: 'New lead', message: 'New website lead Thu Hà (ha@example.test)', resourceId: contact.body.id, read: false }),
    );
    // Org-wide: the agent has it too.
    expect((await agent.get('/api/v1/notifications')).body.data.map((n: any) => n.id)).toContain(note.id);
    const runs = await eventually(async () => {
      const r = (await owner.get(`/api/v1/automation/rules/${rule.body.id}/runs`)).body;
      return r.data.length === 1 && r.data[0].status === 'succeeded' ? r : undefined;
    });
    expect(runs.data[0].contactId).toBe(contact.body.id);
    await owner.post(`/api/v1/automation/rules/${rule.body.id}/pause`);
  });

  it('assign_user and add_tag change the contact in crm', async () => {
    const rule = await owner.post('/api/v1/automation/rules', {
      name: 'Route VIPs',
      trigger: { type: 'contact_created', conditions: [{ field: 'tags', operator: 'contains', value: 'vip' }] },
      actions: [
        { type: 'assign_user', userId: agentId },
        { type: 'add_tag', tag: 'routed' },
      ],
    });
    await owner.post(`/api/v1/automation/rules/${rule.body.id}/activate`);
    const contact = await owner.post('/api/v1/contacts', { name: 'Big Spender', phone: '+84900000004', source: 'manual', tags: ['vip'] });
    expect(contact.status).toBe(201);
    const detail = await eventually(async () => {
      const d = (await owner.get(`/api/v1/contacts/${contact.body.id}`)).body;
      return d.assignedUserId === agentId && d.tags?.includes('routed') ? d : undefined;
    });
    expect(detail.tags).toEqual(expect.arrayContaining(['vip', 'routed']));
    await owner.post(`/api/v1/automation/rules/${rule.body.id}/pause`);
  });

  it('a notification for one user is pushed to that user over socket.io', async () => {
    const token = agentToken;
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect(stack.url, { auth: { token }, transports: ['websocket'], reconnection: false });
      sockets.push(s);
      s.once('connect', () => resolve(s));
      s.once('connect_error', reject);
    });
    const pushed = new Promise<any>((resolve) => socket.on('notification', (n) => n.type === 'assigned_to_you' && resolve(n)));
    const rule = await owner.post('/api/v1/automation/rules', {
      name: 'Tell the agent',
      trigger: { type: 'contact_created', conditions: [{ field: 'name', operator: 'equals', value: 'Socket Person' }] },
      actions: [{ type: 'send_notification', userId: agentId, title: 'Yours', message: '{{name}} is yours', notificationType: 'assigned_to_you' }],
    });
    await owner.post(`/api/v1/automation/rules/${rule.body.id}/activate`);
    const contact = await owner.post('/api/v1/contacts', { name: 'Socket Person', phone: '+84900000005', source: 'manual' });
    const n = await pushed;
    expect(n).toEqual({
      id: expect.any(String),
      userId: agentId,
      type: 'assigned_to_you',
      title: 'Yours',
      message: 'Socket Person is yours',
      resourceId: contact.body.id,
    });
    const listed = (await agent.get('/api/v1/notifications')).body.data.find((x: any) => x.id === n.id);
    expect(listed).toEqual(expect.objectContaining({ read: false, title: 'Yours' }));
  });
});
