import { randomUUID } from 'node:crypto';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { eventBus, member, org } from './support';

// Message templates through the gateway: {{variable}} placeholders, variables detected or checked,
// CRUD, permissions and org isolation.
describe('automation templates', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let owner: Client;
  let agent: Client;
  let other: Client;

  beforeAll(async () => {
    stack = await startStack({ services: ['automation'] });
    bus = await eventBus(stack);
    owner = (await org(stack, 'Acme')).owner;
    agent = (await member(stack, owner, 'agent')).api;
    other = (await org(stack, 'Other')).owner;
  });
  afterAll(async () => {
    await bus?.close();
    await stack?.stop();
  });

  let id: string;

  it('POST /automation/templates is 201 {id, name, createdAt}; variables are detected from the content', async () => {
    const res = await owner.post('/api/v1/automation/templates', {
      name: 'Greeting',
      content: 'Chào {{name}}! We will call {{ phone }} soon, {{name}}. Ref {{contact.email}}',
      category: 'welcome',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), name: 'Greeting', createdAt: expect.any(String) });
    id = res.body.id;
    const got = await owner.get(`/api/v1/automation/templates/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id,
      name: 'Greeting',
      content: 'Chào {{name}}! We will call {{ phone }} soon, {{name}}. Ref {{contact.email}}',
      category: 'welcome',
      variables: ['name', 'phone', 'contact.email'],
      createdAt: res.body.createdAt,
      updatedAt: expect.any(String),
    });
  });

  it('given variables must be exactly the placeholders of the content', async () => {
    const ok = await owner.post('/api/v1/automation/templates', {
      name: 'Reminder',
      content: 'See you at {{time}}, {{name}}',
      variables: ['name', 'time'],
    });
    expect(ok.status).toBe(201);
    expect((await owner.get(`/api/v1/automation/templates/${ok.body.id}`)).body.variables).toEqual(['name', 'time']);

    const extra = await owner.post('/api/v1/automation/templates', { name: 'X', content: 'Hi {{name}}', variables: ['name', 'company'] });
    expect(extra.status).toBe(400);
    expect(extra.body.error.details[0].field).toBe('variables[1]');

    const missing = await owner.post('/api/v1/automation/templates', { name: 'X', content: 'Hi {{name}} from {{company}}', variables: ['name'] });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details[0].field).toBe('variables');
    expect(missing.body.error.message).toContain('{{company}}');

    const malformed = await owner.post('/api/v1/automation/templates', { name: 'X', content: 'Hi', variables: ['first name'] });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details[0].field).toBe('variables[0]');
  });

  it.each([
    ['no name', { content: 'Hi' }, 'name'],
    ['no content', { name: 'X' }, 'content'],
    ['blank content', { name: 'X', content: '   ' }, 'content'],
    ['content over 4000 characters', { name: 'X', content: 'x'.repeat(4001) }, 'content'],
    ['variables not an array', { name: 'X', content: 'Hi', variables: 'name' }, 'variables'],
    ['category not a string', { name: 'X', content: 'Hi', category: 7 }, 'category'],
  ])('POST with %s is 400 naming the field', async (_label, body, field) => {
    const res = await owner.post('/api/v1/automation/templates', body);
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe(field);
  });

  it('GET /automation/templates is the array of the org templates, newest first, filterable by category', async () => {
    const res = await owner.get('/api/v1/automation/templates');
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body.map((t: any) => t.name)).toEqual(['Reminder', 'Greeting']);
    expect(res.body[1]).toEqual(expect.objectContaining({ id, variables: ['name', 'phone', 'contact.email'], category: 'welcome' }));
    const welcome = await owner.get('/api/v1/automation/templates?category=welcome');
    expect(welcome.body.map((t: any) => t.name)).toEqual(['Greeting']);
  });

  it('PUT changes only what was sent; new content re-detects the variables', async () => {
    const renamed = await owner.put(`/api/v1/automation/templates/${id}`, { name: 'Greeting v2' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe('Greeting v2');
    expect(renamed.body.variables).toEqual(['name', 'phone', 'contact.email']);

    const rewritten = await owner.put(`/api/v1/automation/templates/${id}`, { content: 'Hello {{senderName}}' });
    expect(rewritten.status).toBe(200);
    expect(rewritten.body.content).toBe('Hello {{senderName}}');
    expect(rewritten.body.variables).toEqual(['senderName']);
    expect(rewritten.body.category).toBe('welcome');

    const badVars = await owner.put(`/api/v1/automation/templates/${id}`, { variables: ['name'] });
    expect(badVars.status).toBe(400);
    expect(badVars.body.error.details[0].field).toBe('variables[0]');
  });

  it('agents read templates but get 403 on writes', async () => {
    expect((await agent.get('/api/v1/automation/templates')).status).toBe(200);
    expect((await agent.get(`/api/v1/automation/templates/${id}`)).status).toBe(200);
    expect((await agent.post('/api/v1/automation/templates', { name: 'A', content: 'B' })).status).toBe(403);
    expect((await agent.put(`/api/v1/automation/templates/${id}`, { name: 'A' })).status).toBe(403);
    expect((await agent.del(`/api/v1/automation/templates/${id}`)).status).toBe(403);
  });

  it('another organization sees none of them and gets 404 on their ids; unknown and malformed ids are 404', async () => {
    expect((await other.get('/api/v1/automation/templates')).body).toEqual([]);
    expect((await other.get(`/api/v1/automation/templates/${id}`)).status).toBe(404);
    expect((await other.put(`/api/v1/automation/templates/${id}`, { name: 'mine' })).status).toBe(404);
    expect((await other.del(`/api/v1/automation/templates/${id}`)).status).toBe(404);
    // Nor can it point a rule at it.
    const rule = await other.post('/api/v1/automation/rules', {
      name: 'R',
      trigger: { type: 'contact_created' },
      actions: [{ type: 'send_message', templateId: id }],
    });
    expect(rule.status).toBe(400);
    expect(rule.body.error.details[0].field).toBe('actions.0.templateId');
    for (const bad of [randomUUID(), 'nope']) {
      expect((await owner.get(`/api/v1/automation/templates/${bad}`)).status).toBe(404);
      expect((await owner.del(`/api/v1/automation/templates/${bad}`)).status).toBe(404);
    }
  });

  it('a template used by a rule cannot be deleted (409); once unused, DELETE is 204', async () => {
    const rule = await owner.post('/api/v1/automation/rules', {
      name: 'Greeter',
      trigger: { type: 'contact_created' },
      actions: [{ type: 'send_message', template: id }],
    });
    expect(rule.status).toBe(201);
    const refused = await owner.del(`/api/v1/automation/templates/${id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('template_in_use');
    expect(refused.body.error.message).toContain('Greeter');

    expect((await owner.del(`/api/v1/automation/rules/${rule.body.id}`)).status).toBe(204);
    const res = await owner.del(`/api/v1/automation/templates/${id}`);
    expect(res.status).toBe(204);
    expect((await owner.get(`/api/v1/automation/templates/${id}`)).status).toBe(404);
  });
});
