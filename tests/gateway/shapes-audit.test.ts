import { eventually } from '@crm/testing';
import { client, email, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { writeFileSync } from 'node:fs';

function empties(v: unknown, path = '$', out: string[] = []): string[] {
  if (v === '') out.push(path);
  else if (Array.isArray(v)) v.forEach((x, i) => empties(x, `${path}[${i}]`, out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) empties(x, `${path}.${k}`, out);
  return out;
}

describe('audit', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ services: ['crm', 'messaging', 'chatnet-connector', 'automation', 'webhooks', 'ai'], serviceEnv: { 'chatnet-connector': { HEARTBEAT_MS: '500', SCAN_INTERVAL_MS: '500' } } });
  }, 120_000);
  afterAll(() => stack?.stop());

  it('walks', async () => {
    const api = client(stack.url);
    const org = await newOrg(api, 'Acme');
    const o = org.owner;
    const log: string[] = [];
    const created: Record<string, any> = {};
    const post = async (name: string, p: string, b: unknown) => {
      const r = await o.post(p, b);
      log.push(`POST ${p} ${r.status} ${JSON.stringify(empties(r.body))} ${r.status >= 400 ? JSON.stringify(r.body) : ''}`);
      created[name] = r.body;
      return r.body;
    };
    const u = await post('user', '/api/v1/users', { email: email('agent'), fullName: 'Agent', role: 'agent', password: 'correct horse battery' });
    const c = await post('contact', '/api/v1/contacts', { name: 'Min' });
    await post('contact2', '/api/v1/contacts', { name: 'Phone', phone: '0911000111' });
    const ap = await post('appt', '/api/v1/appointments', { contactId: c.id, title: 'T', scheduledAt: '2031-01-01T00:00:00Z' });
    await post('team', '/api/v1/teams', { name: 'Team' });
    await post('rule', '/api/v1/automation/rules', { name: 'R', trigger: { type: 'contact_created' }, actions: [{ type: 'add_tag', tag: 'x' }] });
    await post('tpl', '/api/v1/automation/templates', { name: 'Tp', content: 'Hi' });
    const list = await post('list', '/api/v1/customer-lists', { name: 'L' });
    await post('campaign', '/api/v1/campaigns', { name: 'C', type: 'broadcast', listId: list.id });
    await post('webhook', '/api/v1/webhook-settings', { url: 'https://example.com/hook', events: ['contact.created'] });
    await post('folder', '/api/v1/chat/folders', { name: 'F' });
    await post('preset', '/api/v1/chat/presets', { name: 'P', content: 'x' });
    await post('status', '/api/v1/contact-statuses', { name: 'S' });
    await post('srule', '/api/v1/scoring/rules', { name: 'SR', condition: 'message_received', points: 1 });
    await post('note', `/api/v1/contacts/${c.id}/notes`, { content: 'n' });
    const acc = await post('account', '/api/v1/chatnet-accounts', { displayName: 'Line' });
    await o.post(`/api/v1/chatnet-accounts/${acc.id}/login`);
    await o.post(`/sandbox/accounts/${acc.id}/scan`, {});
    await o.post(`/sandbox/accounts/${acc.id}/inbound`, { fromUid: 'u1', content: 'hello' });
    const conv = await eventually(async () => (await o.get('/api/v1/conversations')).body.data[0]);
    const key = (await o.post('/api/v1/settings/api-key/generate')).body.apiKey;
    const pub = api.withKey(key);
    const gets = ['/profile', '/users', `/users/${u.id}`, '/contacts', `/contacts/${c.id}`, `/contacts/${c.id}/friends`, `/contacts/${c.id}/scores`, '/appointments', `/appointments/${ap.id}`,
      '/teams', `/teams/${created.team.id}`, '/automation/rules', `/automation/rules/${created.rule.id}`, `/automation/rules/${created.rule.id}/runs`, '/automation/templates', `/automation/templates/${created.tpl.id}`,
      '/campaigns', `/campaigns/${created.campaign.id}`, `/campaigns/${created.campaign.id}/recipients`, '/customer-lists', `/customer-lists/${list.id}`, `/customer-lists/${list.id}/members`,
      '/webhook-settings', `/webhook-settings/${created.webhook.id}`, `/webhook-settings/${created.webhook.id}/deliveries`, '/chat/folders', '/chat/presets', `/chat/presets/${created.preset.id}`,
      '/contact-statuses', `/contact-statuses/${created.status.id}`, '/scoring/config', '/scoring/rules', `/scoring/rules/${created.srule.id}`, '/chatnet-accounts', `/chatnet-accounts/${acc.id}`, `/chatnet-accounts/${acc.id}/status`, `/chatnet-accounts/${acc.id}/assignment`,
      '/conversations', `/conversations/${conv.id}`, `/conversations/${conv.id}/messages`, `/conversations/${conv.id}/notes`, '/conversations/counts', '/notifications', '/profile/notifications',
      '/analytics/conversion-funnel', '/analytics/team-performance', '/analytics/response-time', '/analytics/custom', '/audit-log', '/integrations', '/ai/config', '/ai/providers', '/settings/ai', '/settings/api-key',
      '/settings/appointments', '/settings/email', '/settings/inbox', '/email-suppressions', '/messages/search?q=hello'];
    for (const g of gets) {
      const r = await o.get('/api/v1' + g);
      log.push(`GET ${g} ${r.status} ${JSON.stringify(empties(r.body))}${r.status >= 400 ? JSON.stringify(r.body) : ''}`);
      log.push('   ' + JSON.stringify(r.body).slice(0, 1500));
    }
    for (const g of ['/contacts', `/contacts/${c.id}`, '/appointments', '/conversations', `/conversations/${conv.id}/messages`]) {
      const r = await pub.get('/api/public' + g);
      log.push(`PUB ${g} ${r.status} ${JSON.stringify(empties(r.body))}`);
      log.push('   ' + JSON.stringify(r.body).slice(0, 1500));
    }
    writeFileSync('/tmp/shapes/audit.txt', log.join('\n'));
  }, 120_000);
});
