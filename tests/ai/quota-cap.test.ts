import { client, Client, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';

// The daily AI quota spends the deployment's calls (and its vendor money): an organization's admin may set
// it up to the server's cap, AI_DAILY_QUOTA_MAX, never above; a quota stored before the cap was lowered
// counts as the cap.
describe('AI: the daily quota is capped by the server', () => {
  let stack: Stack;
  let owner: Client;

  beforeAll(async () => {
    stack = await startStack({ services: ['ai'], serviceEnv: { ai: { AI_DAILY_QUOTA_MAX: '50', AI_DEFAULT_DAILY_QUOTA: '10' } } });
    owner = (await newOrg(client(stack.url), 'Acme')).owner;
  });
  afterAll(() => stack?.stop());

  it('an admin may set the quota up to the cap', async () => {
    const res = await owner.put('/api/v1/ai/config', { dailyQuota: 50 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dailyQuota: 50, remainingToday: 50 });
    expect((await owner.get('/api/v1/ai/config')).body.dailyQuota).toBe(50);
  });

  it.each([51, 2000, 1_000_000])('a quota of %d, above the cap, is 400 naming dailyQuota and changes nothing', async (dailyQuota) => {
    const res = await owner.put('/api/v1/ai/config', { dailyQuota, enabled: false });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'dailyQuota', message: "must be an integer from 1 to 50 (the server's cap)" }]);
    expect((await owner.get('/api/v1/ai/config')).body).toMatchObject({ dailyQuota: 50, enabled: true });
  });

  it('a quota above what the gateway can carry is still a 400 naming dailyQuota', async () => {
    const res = await owner.put('/api/v1/ai/config', { dailyQuota: 2 ** 40 });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('dailyQuota');
  });

  it('after the operator lowers the cap, a stored quota above it counts as the new cap, and is enforced', async () => {
    await stack.restart('ai', { AI_DAILY_QUOTA_MAX: '2', AI_DEFAULT_DAILY_QUOTA: '1' });
    expect((await owner.get('/api/v1/ai/config')).body).toMatchObject({ dailyQuota: 2, remainingToday: 2 });
    const text = 'Thanks, that was quick!';
    expect((await owner.post('/api/v1/ai/sentiment', { text })).status).toBe(200);
    expect((await owner.post('/api/v1/ai/sentiment', { text })).status).toBe(200);
    const third = await owner.post('/api/v1/ai/sentiment', { text });
    expect(third.status).toBe(429);
    expect(third.body.error.code).toBe('ai_quota_exceeded');
  });
});
