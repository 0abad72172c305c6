import { eventually } from '@crm/testing';
import { auditEntries, auditEntryFor } from '../support/audit';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';

// AI provider keys and assistant settings changes reach identity's audit log through the ai service's
// outbox and the bus; the key itself never appears, only its mask.
describe('audit log: AI providers and settings', () => {
  const KEY = 'sk-openai-audit-secret-0123456789-WXYZ';
  let stack: Stack;
  let api: Client;
  let acme: Awaited<ReturnType<typeof newOrg>>;
  let globex: Awaited<ReturnType<typeof newOrg>>;

  beforeAll(async () => {
    stack = await startStack({ services: ['ai'] });
    api = client(stack.url);
    acme = await newOrg(api, 'Acme');
    globex = await newOrg(api, 'Globex');
  });
  afterAll(() => stack?.stop());

  it('setting and removing a provider key is ai_provider.updated with the mask, never the key', async () => {
    expect((await acme.owner.put('/api/v1/ai/providers/openai', { apiKey: KEY })).status).toBe(200);
    const set = await auditEntryFor(acme.owner, 'ai_provider.updated', 'openai');
    expect(set).toEqual(
      expect.objectContaining({
        actorId: acme.user.id,
        actorType: 'user',
        resourceType: 'ai_provider',
        details: { apiKey: 'set', keyMask: '••••WXYZ', baseUrl: 'unchanged' },
        requestId: expect.any(String),
      }),
    );

    expect((await acme.owner.put('/api/v1/ai/providers/openai', { apiKey: '' })).status).toBe(200);
    await eventually(async () => (await auditEntries(acme.owner, 'ai_provider.updated')).length === 2, 15_000, 100);
    const [removed] = await auditEntries(acme.owner, 'ai_provider.updated');
    expect(removed.details).toEqual({ apiKey: 'removed', baseUrl: 'unchanged' });

    expect(JSON.stringify(await auditEntries(acme.owner, 'ai_provider.*'))).not.toContain(KEY);
    expect(JSON.stringify(await auditEntries(acme.owner, 'ai_provider.*'))).not.toContain(KEY.slice(0, -4));
  });

  it('an assistant settings change is ai_settings.updated with each changed setting from/to; a refused one records nothing', async () => {
    const before = (await acme.owner.get('/api/v1/ai/config')).body;
    expect((await acme.owner.put('/api/v1/ai/config', { dailyQuota: 0 })).status).toBe(400);
    const res = await acme.owner.put('/api/v1/ai/config', { enabled: !before.enabled, dailyQuota: 7 });
    expect(res.status).toBe(200);
    const entry = await auditEntryFor(acme.owner, 'ai_settings.updated', null);
    expect(entry.details).toEqual({ enabled: { from: before.enabled, to: !before.enabled }, dailyQuota: { from: before.dailyQuota, to: 7 } });
    expect(await auditEntries(acme.owner, 'ai_settings.updated')).toHaveLength(1);
    expect(await auditEntries(globex.owner, 'ai_settings.updated')).toEqual([]);
  });
});
