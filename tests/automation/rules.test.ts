import { randomUUID } from 'node:crypto';
import { TRIGGER_TYPES } from '@crm/events';
import type { Client } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { eventBus, member, org } from './support';

// Automation rules through the gateway: create → draft, list with filters, update, activate/pause,
// delete, the run log, validation naming the field, permissions and org isolation.
describe('automation rules', () => {
  let stack: Stack;
  let bus: Awaited<ReturnType<typeof eventBus>>;
  let owner: Client;
  let agent: Client;
  let lead: Client;
  let other: Client;
  let otherUserId: string;
  let agentId: string;

  const valid = () => ({
    name: 'Welcome new leads',
    description: 'Greets every new lead from the chat network',
    type: 'sequence',
    trigger: {
      type: 'contact_created',
      conditions: [
        { field: 'source', operator: 'equals', value: 'chatnet' },
        { field: 'leadScore', operator: 'gte', value: 50 },
      ],
    },
    actions: [
      { type: 'send_message', template: 'Xin chào {{name}}!' },
      { type: 'wait', duration: '1h' },
      { type: 'add_tag', tag: 'welcomed' },
    ],
  });

  beforeAll(async () => {
    stack = await startStack({ services: ['automation'] });
    bus = await eventBus(stack);
    const a = await org(stack, 'Acme');
    owner = a.owner;
    const ag = await member(stack, owner, 'agent');
    agent = ag.api;
    agentId = ag.id;
    lead = (await member(stack, owner, 'team_lead')).api;
    const b = await org(stack, 'Other');
    other = b.owner;
    otherUserId = b.user.id;
  });
  afterAll(async () => {
    await bus?.close();
    await stack?.stop();
  });

  let ruleId: string;

  it('POST /automation/rules creates a draft and answers 201 {id, name, status, createdAt, secret}', async () => {
    const res = await owner.post('/api/v1/automation/rules', valid());
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'Welcome new leads',
      status: 'draft',
      createdAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_/),
    });
    expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
    ruleId = res.body.id;
  });

  it('GET /automation/rules/:id returns the whole rule with typed condition values', async () => {
    const res = await owner.get(`/api/v1/automation/rules/${ruleId}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: ruleId,
      name: 'Welcome new leads',
      description: 'Greets every new lead from the chat network',
      type: 'sequence',
      trigger: {
        type: 'contact_created',
        conditions: [
          { field: 'source', operator: 'equals', value: 'chatnet' },
          { field: 'leadScore', operator: 'gte', value: 50 },
        ],
      },
      actions: [
        { type: 'send_message', template: 'Xin chào {{name}}!' },
        { type: 'wait', duration: '1h' },
        { type: 'add_tag', tag: 'welcomed' },
      ],
      status: 'draft',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      runCount: 0,
      lastRunAt: null,
    });
  });

  it('every role of the org can read rules; agents get 403 on every write', async () => {
    expect((await agent.get('/api/v1/automation/rules')).status).toBe(200);
    expect((await agent.get(`/api/v1/automation/rules/${ruleId}`)).status).toBe(200);
    expect((await agent.get(`/api/v1/automation/rules/${ruleId}/runs`)).status).toBe(200);
    const writes = [
      await agent.post('/api/v1/automation/rules', valid()),
      await agent.put(`/api/v1/automation/rules/${ruleId}`, { name: 'x' }),
      await agent.post(`/api/v1/automation/rules/${ruleId}/activate`),
      await agent.post(`/api/v1/automation/rules/${ruleId}/pause`),
      await agent.del(`/api/v1/automation/rules/${ruleId}`),
    ];
    for (const w of writes) {
      expect(w.status).toBe(403);
      expect(w.body.error.code).toBe('forbidden');
    }
  });

  it('a team lead holds automation:manage', async () => {
    const res = await lead.post('/api/v1/automation/rules', { ...valid(), name: 'Lead rule' });
    expect(res.status).toBe(201);
  });

  it('without a token it is 401', async () => {
    const res = await fetch(`${stack.url}/api/v1/automation/rules`);
    expect(res.status).toBe(401);
  });

  describe('validation: 400 naming the field', () => {
    const cases: Array<[string, (b: any) => void, string]> = [
      ['missing name', (b) => delete b.name, 'name'],
      ['blank name', (b) => (b.name = '   '), 'name'],
      ['missing trigger', (b) => delete b.trigger, 'trigger'],
      ['unknown trigger type', (b) => (b.trigger.type = 'contact_exploded'), 'trigger.type'],
      ['unknown operator', (b) => (b.trigger.conditions[0].operator = 'like'), 'trigger.conditions.0.operator'],
      ['unknown field', (b) => (b.trigger.conditions[1].field = 'shoeSize'), 'trigger.conditions.1.field'],
      ['missing value', (b) => delete b.trigger.conditions[0].value, 'trigger.conditions.0.value'],
      ['gte with text', (b) => (b.trigger.conditions[1].value = 'many'), 'trigger.conditions.1.value'],
      ['in without an array', (b) => (b.trigger.conditions[0] = { field: 'source', operator: 'in', value: 'chatnet' }), 'trigger.conditions.0.value'],
      [
        'in with an object inside',
        (b) => (b.trigger.conditions[0] = { field: 'source', operator: 'in', value: ['a', { b: 1 }] }),
        'trigger.conditions.0.value.1',
      ],
      ['conditions not an array', (b) => (b.trigger.conditions = 'source=chatnet'), 'trigger.conditions'],
      ['keywords on a non-keyword trigger', (b) => (b.trigger.keywords = ['hi']), 'trigger.keywords'],
      ['keyword trigger without keywords', (b) => (b.trigger = { type: 'keyword', conditions: [] }), 'trigger.keywords'],
      ['unknown action type', (b) => (b.actions[2].type = 'send_fax'), 'actions.2.type'],
      ['action without type', (b) => delete b.actions[0].type, 'actions.0.type'],
      ['send_message without template', (b) => (b.actions[0] = { type: 'send_message' }), 'actions.0.template'],
      ['send_message with an unknown template id', (b) => (b.actions[0] = { type: 'send_message', template: randomUUID() }), 'actions.0.template'],
      ['send_message with a malformed templateId', (b) => (b.actions[0] = { type: 'send_message', templateId: 'nope' }), 'actions.0.templateId'],
      ['send_notification without message or template', (b) => (b.actions[1] = { type: 'send_notification', title: 'Hi' }), 'actions.1.message'],
      [
        'send_notification to a malformed user id',
        (b) => (b.actions[1] = { type: 'send_notification', message: 'x', userId: 'bob' }),
        'actions.1.userId',
      ],
      ['assign_user without userId', (b) => (b.actions[1] = { type: 'assign_user' }), 'actions.1.userId'],
      ['assign_user to an unknown user', (b) => (b.actions[1] = { type: 'assign_user', userId: randomUUID() }), 'actions.1.userId'],
      ['userId that is not a string', (b) => (b.actions[1] = { type: 'assign_user', userId: 42 }), 'actions.1.userId'],
      ['add_tag without tag', (b) => (b.actions[2] = { type: 'add_tag' }), 'actions.2.tag'],
      ['wait without duration', (b) => (b.actions[1] = { type: 'wait' }), 'actions.1.duration'],
      ['wait with a malformed duration', (b) => (b.actions[1] = { type: 'wait', duration: 'soon' }), 'actions.1.duration'],
      ['wait longer than 90 days', (b) => (b.actions[1] = { type: 'wait', duration: '91d' }), 'actions.1.duration'],
      ['actions not an array', (b) => (b.actions = { type: 'add_tag', tag: 'x' }), 'actions'],
      ['bad rule type', (b) => (b.type = 'Not A Slug!'), 'type'],
    ];
    it.each(cases)('%s', async (_name, mutate, field) => {
      const body = valid();
      mutate(body);
      const res = await owner.post('/api/v1/automation/rules', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_argument');
      expect(res.body.error.details).toEqual([expect.objectContaining({ field })]);
    });

    it('a user of another organization is not a valid assignee', async () => {
      const res = await owner.post('/api/v1/automation/rules', { ...valid(), actions: [{ type: 'assign_user', userId: otherUserId }] });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('actions.0.userId');
    });

    it('a user of the org is a valid assignee and notification recipient; numeric durations are seconds', async () => {
      const res = await owner.post('/api/v1/automation/rules', {
        ...valid(),
        actions: [
          { type: 'assign_user', userId: agentId },
          { type: 'wait', duration: 90 },
          { type: 'send_notification', userId: agentId, title: 'New lead', message: '{{name}} is yours' },
        ],
      });
      expect(res.status).toBe(201);
      const rule = await owner.get(`/api/v1/automation/rules/${res.body.id}`);
      expect(rule.body.actions).toEqual([
        { type: 'assign_user', userId: agentId },
        { type: 'wait', duration: '90' },
        { type: 'send_notification', userId: agentId, title: 'New lead', message: '{{name}} is yours' },
      ]);
    });

    it('a keyword trigger keeps its keywords; other triggers show none', async () => {
      const res = await owner.post('/api/v1/automation/rules', {
        name: 'Price question',
        trigger: { type: 'keyword', keywords: ['báo giá', 'price'], conditions: [{ field: 'threadType', operator: 'equals', value: 'user' }] },
        actions: [{ type: 'send_message', template: 'We will send a quote shortly' }],
      });
      expect(res.status).toBe(201);
      const rule = await owner.get(`/api/v1/automation/rules/${res.body.id}`);
      expect(rule.body.trigger).toEqual({
        type: 'keyword',
        keywords: ['báo giá', 'price'],
        conditions: [{ field: 'threadType', operator: 'equals', value: 'user' }],
      });
      expect(rule.body.type).toBe('sequence');
      expect(rule.body.description).toBeNull();
    });

    it('message triggers may ask about the contact (contact.*)', async () => {
      const res = await owner.post('/api/v1/automation/rules', {
        name: 'VIP message',
        trigger: {
          type: 'message_received',
          conditions: [
            { field: 'contact.tags', operator: 'contains', value: 'vip' },
            { field: 'message.contentType', operator: 'in', value: ['text', 'image'] },
          ],
        },
        actions: [{ type: 'send_notification', message: 'VIP wrote: {{message}}' }],
      });
      expect(res.status).toBe(201);
    });

    it('malformed JSON is 400', async () => {
      const res = await owner.post('/api/v1/automation/rules', '{"name":');
      expect(res.status).toBe(400);
    });
  });

  it('PUT /automation/rules/:id changes only what was sent', async () => {
    const res = await owner.put(`/api/v1/automation/rules/${ruleId}`, { name: 'Welcome every lead', description: '' });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Welcome every lead');
    expect(res.body.description).toBeNull();
    expect(res.body.actions).toHaveLength(3);
    expect(res.body.trigger.conditions).toHaveLength(2);
    expect(res.body.status).toBe('draft');

    const replaced = await owner.put(`/api/v1/automation/rules/${ruleId}`, {
      trigger: { type: 'message_received', conditions: [] },
      actions: [{ type: 'send_notification', message: 'New message from {{senderName}}' }],
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.trigger).toEqual({ type: 'message_received', conditions: [] });
    expect(replaced.body.actions).toEqual([{ type: 'send_notification', message: 'New message from {{senderName}}' }]);
    expect(replaced.body.name).toBe('Welcome every lead');
  });

  it('PUT validates like create', async () => {
    const res = await owner.put(`/api/v1/automation/rules/${ruleId}`, {
      actions: [
        { type: 'add_tag', tag: 'ok' },
        { type: 'assign_user', userId: randomUUID() },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('actions.1.userId');
    const blank = await owner.put(`/api/v1/automation/rules/${ruleId}`, { name: '' });
    expect(blank.status).toBe(400);
    expect(blank.body.error.details[0].field).toBe('name');
  });

  it('POST :id/activate moves draft → active, and again is a no-op; :id/pause moves active → paused', async () => {
    const act = await owner.post(`/api/v1/automation/rules/${ruleId}/activate`);
    expect(act.status).toBe(200);
    expect(act.body.status).toBe('active');
    expect((await owner.post(`/api/v1/automation/rules/${ruleId}/activate`)).body.status).toBe('active');
    const pause = await owner.post(`/api/v1/automation/rules/${ruleId}/pause`);
    expect(pause.status).toBe(200);
    expect(pause.body.status).toBe('paused');
    expect((await owner.post(`/api/v1/automation/rules/${ruleId}/pause`)).body.status).toBe('paused');
    expect((await owner.post(`/api/v1/automation/rules/${ruleId}/activate`)).body.status).toBe('active');
  });

  it('an active rule cannot lose all its actions; a draft cannot be paused; a rule without actions cannot be activated (422)', async () => {
    const emptied = await owner.put(`/api/v1/automation/rules/${ruleId}`, { actions: [] });
    expect(emptied.status).toBe(422);
    expect(emptied.body.error.code).toBe('rule_incomplete');

    const draft = await owner.post('/api/v1/automation/rules', { name: 'Empty', trigger: { type: 'appointment_created' }, actions: [] });
    expect(draft.status).toBe(201);
    const pause = await owner.post(`/api/v1/automation/rules/${draft.body.id}/pause`);
    expect(pause.status).toBe(422);
    expect(pause.body.error.code).toBe('invalid_state');
    const act = await owner.post(`/api/v1/automation/rules/${draft.body.id}/activate`);
    expect(act.status).toBe(422);
    expect(act.body.error.code).toBe('rule_incomplete');
  });

  it('GET /automation/rules lists with pagination and the status/type/triggerType filters', async () => {
    const all = await owner.get('/api/v1/automation/rules');
    expect(all.status).toBe(200);
    const total = all.body.pagination.total;
    expect(total).toBeGreaterThanOrEqual(6);
    expect(all.body.pagination).toEqual({ total, page: 1, limit: 50, pages: 1 });
    // Newest first.
    const times = all.body.data.map((r: any) => r.createdAt);
    expect([...times].sort().reverse()).toEqual(times);

    const page2 = await owner.get('/api/v1/automation/rules?page=2&limit=2');
    expect(page2.body.data).toHaveLength(2);
    expect(page2.body.pagination).toEqual({ total, page: 2, limit: 2, pages: Math.ceil(total / 2) });
    expect(page2.body.data[0].id).toBe(all.body.data[2].id);

    const active = await owner.get('/api/v1/automation/rules?status=active');
    expect(active.body.data.map((r: any) => r.id)).toEqual([ruleId]);
    const drafts = await owner.get('/api/v1/automation/rules?status=draft');
    expect(drafts.body.data.every((r: any) => r.status === 'draft')).toBe(true);
    expect(drafts.body.pagination.total).toBe(total - 1);

    await owner.post('/api/v1/automation/rules', { ...valid(), type: 'onboarding' });
    const typed = await owner.get('/api/v1/automation/rules?type=onboarding');
    expect(typed.body.data).toHaveLength(1);
    expect(typed.body.data[0].type).toBe('onboarding');

    const kw = await owner.get('/api/v1/automation/rules?triggerType=keyword');
    expect(kw.body.data.map((r: any) => r.name)).toEqual(['Price question']);
  });

  it('list parameters: out-of-range clamped, non-numeric or unknown values 400', async () => {
    const clamped = await owner.get('/api/v1/automation/rules?limit=1000&page=0');
    expect(clamped.status).toBe(200);
    expect(clamped.body.pagination.limit).toBe(100);
    expect(clamped.body.pagination.page).toBe(1);
    const bad = await owner.get('/api/v1/automation/rules?limit=ten');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe('limit');
    const badStatus = await owner.get('/api/v1/automation/rules?status=running');
    expect(badStatus.status).toBe(400);
    expect(badStatus.body.error.details[0].field).toBe('status');
  });

  it('the gateway filters by exactly the triggers automation accepts: each one creates and lists, others are 400 at both', async () => {
    const { owner: fresh } = await org(stack, 'Triggers');
    for (const type of TRIGGER_TYPES) {
      const own: Record<string, object> = {
        keyword: { keywords: ['hello'] },
        schedule: { cron: '0 9 * * 1-5', timezone: 'Asia/Ho_Chi_Minh' },
        conversation_idle: { minutes: 60 },
      };
      const trigger = { type, ...own[type] };
      const created = await fresh.post('/api/v1/automation/rules', { name: `On ${type}`, trigger, actions: [{ type: 'add_tag', tag: 'seen' }] });
      expect({ type, status: created.status }).toEqual({ type, status: 201 });
      const listed = await fresh.get(`/api/v1/automation/rules?triggerType=${type}`);
      expect({ type, status: listed.status, names: listed.body.data?.map((r: any) => r.name) }).toEqual({ type, status: 200, names: [`On ${type}`] });
    }
    const unknown = await fresh.post('/api/v1/automation/rules', {
      name: 'On update',
      trigger: { type: 'contact_updated' },
      actions: [{ type: 'add_tag', tag: 'seen' }],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details[0].field).toBe('trigger.type');
    const unknownFilter = await fresh.get('/api/v1/automation/rules?triggerType=contact_updated');
    expect(unknownFilter.status).toBe(400);
    expect(unknownFilter.body.error.details[0].field).toBe('triggerType');
  });

  it('GET /automation/rules/:id/runs is an empty paginated list for a rule that never ran', async () => {
    const res = await owner.get(`/api/v1/automation/rules/${ruleId}/runs`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], pagination: { total: 0, page: 1, limit: 50, pages: 0 } });
  });

  it('unknown and malformed ids are 404', async () => {
    for (const id of [randomUUID(), 'not-a-uuid']) {
      expect((await owner.get(`/api/v1/automation/rules/${id}`)).status).toBe(404);
      expect((await owner.put(`/api/v1/automation/rules/${id}`, { name: 'x' })).status).toBe(404);
      expect((await owner.post(`/api/v1/automation/rules/${id}/activate`)).status).toBe(404);
      expect((await owner.post(`/api/v1/automation/rules/${id}/pause`)).status).toBe(404);
      expect((await owner.del(`/api/v1/automation/rules/${id}`)).status).toBe(404);
      expect((await owner.get(`/api/v1/automation/rules/${id}/runs`)).status).toBe(404);
    }
  });

  it('another organization sees none of these rules and gets 404 on their ids', async () => {
    const list = await other.get('/api/v1/automation/rules');
    expect(list.body).toEqual({ data: [], pagination: { total: 0, page: 1, limit: 50, pages: 0 } });
    const get = await other.get(`/api/v1/automation/rules/${ruleId}`);
    expect(get.status).toBe(404);
    expect(get.body.error.code).toBe('not_found');
    expect((await other.put(`/api/v1/automation/rules/${ruleId}`, { name: 'mine now' })).status).toBe(404);
    expect((await other.post(`/api/v1/automation/rules/${ruleId}/pause`)).status).toBe(404);
    expect((await other.get(`/api/v1/automation/rules/${ruleId}/runs`)).status).toBe(404);
    expect((await other.del(`/api/v1/automation/rules/${ruleId}`)).status).toBe(404);
    expect((await owner.get(`/api/v1/automation/rules/${ruleId}`)).body.name).toBe('Welcome every lead');
  });

  it('DELETE /automation/rules/:id is 204, then the rule is gone', async () => {
    const res = await owner.del(`/api/v1/automation/rules/${ruleId}`);
    expect(res.status).toBe(204);
    expect((await owner.get(`/api/v1/automation/rules/${ruleId}`)).status).toBe(404);
    expect((await owner.del(`/api/v1/automation/rules/${ruleId}`)).status).toBe(404);
  });
});
