import { client, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';

// Every service's routes are mounted under /api/v1; the bearer check must run once per request however far
// down the list the route's module is, or the per-user rate limit is spent several times per request.
describe('bearer authentication runs once per request', () => {
  const LIMIT = 20;
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ services: ['webhooks'], env: { RATE_LIMIT_USER_PER_MINUTE: String(LIMIT) } });
  });
  afterAll(() => stack.stop());

  it('a route of a later module costs one unit of the per-user rate limit, and the limit still holds', async () => {
    const { owner } = await newOrg(client(stack.url), 'Acme');
    const statuses: number[] = [];
    // Half the limit: with the check repeated per module (webhooks is the fifth) these would hit 429.
    for (let i = 0; i < LIMIT / 2; i++) statuses.push((await owner.get('/api/v1/webhook-settings')).status);
    expect(statuses).toEqual(Array(LIMIT / 2).fill(200));
    // Well past the limit: at least one 429 even if a minute window ends in between.
    const more: number[] = [];
    for (let i = 0; i < 2 * LIMIT + 1; i++) more.push((await owner.get('/api/v1/webhook-settings')).status);
    expect(more).toContain(429);
  });

  it('an unknown path under /api/v1 without a token is 401, with one it is 404', async () => {
    const { owner } = await newOrg(client(stack.url), 'Beta');
    const anon = await fetch(`${stack.url}/api/v1/no-such-thing`);
    expect(anon.status).toBe(401);
    expect((await owner.get('/api/v1/no-such-thing')).status).toBe(404);
  });
});
