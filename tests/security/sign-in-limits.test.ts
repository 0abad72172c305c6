import { client, newOrg } from '../support/http';
import { startStack, type Stack } from '../support/stack';

// Sign-in limits count per account and client address, in buckets of their own (issue #27 item 6): an attacker
// behind the same address as everyone else (an office, a proxy) can neither use up everybody's sign-in allowance
// with requests to other unauthenticated routes nor lock other people out. The gateway trusts one proxy hop here, so
// each request speaks as the address it puts in X-Forwarded-For.
describe('sign-in limits per account and address, in their own bucket', () => {
  let stack: Stack;
  const from = (ip: string) => client(stack.url, { 'x-forwarded-for': ip });

  beforeAll(async () => {
    stack = await startStack({
      env: {
        SIGNUP_ENABLED: 'true',
        TRUST_PROXY_HOPS: '1',
        LOGIN_MAX_FAILURES: '1000',
        LOGIN_MAX_FAILURES_PER_DAY: '3',
        RATE_LIMIT_AUTH_PER_MINUTE: '8',
      },
      services: ['automation'],
    });
  }, 60_000);
  afterAll(() => stack?.stop());

  it("the daily failed-login lock holds one account at one address: not the account elsewhere, not others' accounts there", async () => {
    const victim = await newOrg(from('198.51.100.1'), 'Victim Org');
    const bystander = await newOrg(from('198.51.100.2'), 'Bystander Org');
    const attacker = from('198.51.100.66');
    for (let i = 0; i < 3; i++)
      expect((await attacker.post('/api/v1/auth/login', { email: victim.email, password: 'wrong password' })).status).toBe(401);
    const locked = await attacker.post('/api/v1/auth/login', { email: victim.email, password: 'correct horse battery' });
    expect(locked.status).toBe(429);
    expect(locked.body.error.code).toBe('too_many_attempts');
    // The owner, from their own address, still signs in; someone else at the attacker's address too.
    expect((await from('198.51.100.1').post('/api/v1/auth/login', { email: victim.email, password: 'correct horse battery' })).status).toBe(200);
    expect((await attacker.post('/api/v1/auth/login', { email: bystander.email, password: 'correct horse battery' })).status).toBe(200);
  });

  it('campaign email links (unsubscribe pages, open pixels) never spend the sign-in bucket', async () => {
    const office = from('198.51.100.77');
    // A mail scanner at the office fetches far more links than sign-in's 8 per minute allows.
    for (let i = 0; i < 20; i++) {
      const status = (await office.get(`/o/not-a-real-token-${i}.gif`)).status;
      expect(status).toBe(404);
    }
    expect((await office.get('/u/not-a-real-token')).status).toBe(404);
    // Sign-in from that address is untouched.
    const org = await newOrg(from('198.51.100.78'), 'Office Org');
    expect((await office.post('/api/v1/auth/login', { email: org.email, password: 'correct horse battery' })).status).toBe(200);
  });
});
