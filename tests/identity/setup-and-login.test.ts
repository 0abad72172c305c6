import { client, email } from '../support/http';
import { startStack, Stack } from '../support/stack';

// First-run setup works exactly once, on an empty system; sign-in and tokens behave as the spec says.
describe('setup, sign-in, profile, refresh and logout', () => {
  let stack: Stack;
  let api: ReturnType<typeof client>;
  const ownerEmail = email('first');
  const password = 'correct horse battery';

  beforeAll(async () => {
    stack = await startStack({ env: { SIGNUP_ENABLED: 'false' } });
    api = client(stack.url);
  });
  afterAll(() => stack.stop());

  it('GET /setup/status reports that setup is required on an empty system', async () => {
    const res = await api.get('/api/v1/setup/status');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ setupRequired: true });
  });

  it('POST /setup with a missing field is 400 naming the field', async () => {
    const res = await api.post('/api/v1/setup', { orgName: 'Acme', fullName: 'Ann', password });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_argument');
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'email' })]);
    expect(res.body.requestId).toBeTruthy();
  });

  it('POST /setup with a short password is 400', async () => {
    const res = await api.post('/api/v1/setup', { orgName: 'Acme', fullName: 'Ann', email: ownerEmail, password: 'short' });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('password');
  });

  it('POST /setup with malformed JSON is 400, not 500', async () => {
    const res = await api.post('/api/v1/setup', '{"orgName":');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_json');
  });

  let token: string;

  it('POST /setup creates the organization and its owner and signs them in (201)', async () => {
    const res = await api.post('/api/v1/setup', { orgName: 'Acme', fullName: 'Ann Owner', email: ownerEmail, password });
    expect(res.status).toBe(201);
    expect(res.body.token).toEqual(expect.any(String));
    expect(res.body.refreshToken).toEqual(expect.any(String));
    expect(res.body.user).toEqual({ id: expect.any(String), email: ownerEmail, fullName: 'Ann Owner', role: 'owner', orgId: expect.any(String) });
    token = res.body.token;
  });

  it('POST /setup a second time is 409 and status no longer asks for setup', async () => {
    const res = await api.post('/api/v1/setup', { orgName: 'Other', fullName: 'Bob', email: email('second'), password });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('setup_complete');
    const status = await api.get('/api/v1/setup/status');
    expect(status.body).toEqual({ setupRequired: false });
  });

  it('POST /auth/signup is 403 while SIGNUP_ENABLED is off', async () => {
    const res = await api.post('/api/v1/auth/signup', { orgName: 'Other', fullName: 'Bob', email: email('second'), password });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('signup_disabled');
  });

  it('POST /auth/login with the right password returns a token (200)', async () => {
    const res = await api.post('/api/v1/auth/login', { email: ownerEmail.toUpperCase(), password });
    expect(res.status).toBe(200);
    expect(res.body.user.email).toBe(ownerEmail);
    expect(res.body.user.role).toBe('owner');
  });

  it('POST /auth/login with a wrong password or unknown email is the same generic 401', async () => {
    const wrong = await api.post('/api/v1/auth/login', { email: ownerEmail, password: 'wrong password' });
    const unknown = await api.post('/api/v1/auth/login', { email: email('nobody'), password });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body.error).toEqual(unknown.body.error);
    expect(wrong.body.error.message).toBe('Invalid email or password');
  });

  it('POST /auth/login with an empty body is 400', async () => {
    const res = await api.post('/api/v1/auth/login', {});
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['email', 'password']);
  });

  it('GET /profile returns the signed-in user with the spec fields', async () => {
    const res = await api.as(token).get('/api/v1/profile');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(
      expect.objectContaining({
        id: expect.any(String),
        email: ownerEmail,
        fullName: 'Ann Owner',
        role: 'owner',
        orgId: expect.any(String),
        department: null,
        avatar: null,
        createdAt: expect.any(String),
        lastLogin: expect.any(String),
      }),
    );
    expect(res.body).not.toHaveProperty('passwordHash');
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('GET /profile without a token, with a bad token or a forged one is 401', async () => {
    expect((await api.get('/api/v1/profile')).status).toBe(401);
    expect((await api.as('not-a-jwt').get('/api/v1/profile')).status).toBe(401);
    const [h, p] = token.split('.');
    expect((await api.as(`${h}.${p}.forgedsignature`).get('/api/v1/profile')).status).toBe(401);
    // alg=none is refused: the algorithm is pinned.
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${p}.`;
    expect((await api.as(none).get('/api/v1/profile')).status).toBe(401);
  });

  it('echoes a client-sent x-request-id', async () => {
    const res = await api.get('/api/v1/setup/status', { 'x-request-id': 'trace-abc-123' });
    expect(res.headers.get('x-request-id')).toBe('trace-abc-123');
  });

  it('POST /auth/refresh rotates the refresh token; reusing the spent one is 401 and revokes the family', async () => {
    // A session of its own: the replay below revokes the family's access tokens too, and later tests use setup's token.
    const { refreshToken } = (await api.post('/api/v1/auth/login', { email: ownerEmail, password })).body;
    const first = await api.post('/api/v1/auth/refresh', { refreshToken });
    expect(first.status).toBe(200);
    expect(first.body.refreshToken).not.toBe(refreshToken);
    expect((await api.as(first.body.token).get('/api/v1/profile')).status).toBe(200);

    const replay = await api.post('/api/v1/auth/refresh', { refreshToken });
    expect(replay.status).toBe(401);
    // The rotated token belonged to the same family, so it is dead too.
    const next = await api.post('/api/v1/auth/refresh', { refreshToken: first.body.refreshToken });
    expect(next.status).toBe(401);
  });

  it("a replayed refresh token also revokes the access tokens of its family, not the user's other sessions", async () => {
    const stolen = await api.post('/api/v1/auth/login', { email: ownerEmail, password });
    const other = await api.post('/api/v1/auth/login', { email: ownerEmail, password });
    const rotated = await api.post('/api/v1/auth/refresh', { refreshToken: stolen.body.refreshToken });
    expect(rotated.status).toBe(200);
    expect((await api.as(rotated.body.token).get('/api/v1/profile')).status).toBe(200);

    expect((await api.post('/api/v1/auth/refresh', { refreshToken: stolen.body.refreshToken })).status).toBe(401);
    expect((await api.as(stolen.body.token).get('/api/v1/profile')).status).toBe(401);
    expect((await api.as(rotated.body.token).get('/api/v1/profile')).status).toBe(401);
    expect((await api.as(other.body.token).get('/api/v1/profile')).status).toBe(200);
  });

  it('POST /auth/refresh with a bad token is 401 and without one is 400', async () => {
    expect((await api.post('/api/v1/auth/refresh', { refreshToken: 'nope' })).status).toBe(401);
    expect((await api.post('/api/v1/auth/refresh', {})).status).toBe(400);
  });

  it('POST /auth/logout revokes the access token and the refresh token at once', async () => {
    const login = await api.post('/api/v1/auth/login', { email: ownerEmail, password });
    const me = api.as(login.body.token);
    expect((await me.get('/api/v1/profile')).status).toBe(200);
    const out = await me.post('/api/v1/auth/logout', { refreshToken: login.body.refreshToken });
    expect(out.status).toBe(200);
    expect((await me.get('/api/v1/profile')).status).toBe(401);
    expect((await api.post('/api/v1/auth/refresh', { refreshToken: login.body.refreshToken })).status).toBe(401);
  });

  it('unknown routes are 404 with the error body for a signed-in caller, 401 without a token', async () => {
    const res = await api.as(token).get('/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
    // Everything under /api/v1 but the sign-in routes needs the token, so route existence does not leak.
    expect((await api.get('/api/v1/nothing-here')).status).toBe(401);
    expect((await api.get('/nothing-here')).status).toBe(404);
  });

  it('GET /healthz and /readyz answer when identity is up', async () => {
    expect((await api.get('/healthz')).status).toBe(200);
    const ready = await api.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ redis: true, identity: true });
  });
});
