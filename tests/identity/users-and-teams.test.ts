import { Client, client, email, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';

describe('users and teams', () => {
  let stack: Stack;
  let api: Client;
  let acme: Awaited<ReturnType<typeof newOrg>>;
  let globex: Awaited<ReturnType<typeof newOrg>>;
  const password = 'correct horse battery';

  beforeAll(async () => {
    stack = await startStack();
    api = client(stack.url);
    acme = await newOrg(api, 'Acme');
    globex = await newOrg(api, 'Globex');
  });
  afterAll(() => stack.stop());

  async function createUser(owner: Client, role = 'agent', extra: Record<string, unknown> = {}) {
    const e = email(role);
    const res = await owner.post('/api/v1/users', {
      email: e,
      fullName: `${role} person`,
      role,
      department: 'sales',
      phone: '+84 90 000 0000',
      password,
      ...extra,
    });
    expect(res.status).toBe(201);
    const login = await api.post('/api/v1/auth/login', { email: e, password });
    return { id: res.body.id as string, email: e, as: api.as(login.body.token), res };
  }

  describe('POST /api/v1/users', () => {
    it('creates a user with a password (201, invitationSent false)', async () => {
      const u = await createUser(acme.owner, 'agent');
      expect(u.res.body).toEqual(
        expect.objectContaining({
          id: expect.any(String),
          email: u.email,
          fullName: 'agent person',
          role: 'agent',
          createdAt: expect.any(String),
          lastLogin: null,
          invitationSent: false,
        }),
      );
      expect(u.res.body.inviteUrl).toBeNull();
    });

    it('creates an invitation when no password is given; accepting it sets the password once', async () => {
      const e = email('invitee');
      const res = await acme.owner.post('/api/v1/users', { email: e, fullName: 'Ivy Invitee', role: 'agent' });
      expect(res.status).toBe(201);
      expect(res.body.invitationSent).toBe(false);
      const token = new URL(res.body.inviteUrl).searchParams.get('token')!;
      // Not yet able to sign in.
      expect((await api.post('/api/v1/auth/login', { email: e, password })).status).toBe(401);
      const accepted = await api.post('/api/v1/auth/invitations/accept', { token, password });
      expect(accepted.status).toBe(200);
      expect(accepted.body.user.email).toBe(e);
      expect((await api.post('/api/v1/auth/login', { email: e, password })).status).toBe(200);
      // Single use.
      expect((await api.post('/api/v1/auth/invitations/accept', { token, password })).status).toBe(404);
    });

    it('is 400 for a bad email or role and names the field', async () => {
      const bad = await acme.owner.post('/api/v1/users', { email: 'not-an-email', fullName: 'X', role: 'wizard' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['email', 'role']);
    });

    it('is 409 when the email is taken (in any organization)', async () => {
      const res = await globex.owner.post('/api/v1/users', { email: acme.email, fullName: 'Dup', role: 'agent' });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('email_taken');
    });

    it('is 403 for an agent (users:manage) and for an admin granting owner', async () => {
      const agent = await createUser(acme.owner, 'agent');
      expect((await agent.as.post('/api/v1/users', { email: email(), fullName: 'X', role: 'agent' })).status).toBe(403);
      const admin = await createUser(acme.owner, 'admin');
      expect((await admin.as.post('/api/v1/users', { email: email(), fullName: 'X', role: 'owner' })).status).toBe(403);
      expect((await admin.as.post('/api/v1/users', { email: email(), fullName: 'X', role: 'admin', password })).status).toBe(201);
    });

    it('is 401 without a token', async () => {
      expect((await api.post('/api/v1/users', { email: email(), fullName: 'X' })).status).toBe(401);
    });
  });

  describe('GET /api/v1/users', () => {
    it('lists only the organization’s users, with filters and pagination', async () => {
      const lead = await createUser(globex.owner, 'team_lead', { department: 'support' });
      const all = await globex.owner.get('/api/v1/users');
      expect(all.status).toBe(200);
      expect(all.body.pagination).toEqual({ total: 2, page: 1, limit: 50, pages: 1 });
      expect(all.body.data.every((u: { orgId: string }) => u.orgId === globex.user.orgId)).toBe(true);

      const byRole = await globex.owner.get('/api/v1/users?role=team_lead');
      expect(byRole.body.data.map((u: { id: string }) => u.id)).toEqual([lead.id]);
      const byDept = await globex.owner.get('/api/v1/users?department=support');
      expect(byDept.body.data).toHaveLength(1);
      const paged = await globex.owner.get('/api/v1/users?limit=1&page=2');
      expect(paged.body.pagination).toEqual({ total: 2, page: 2, limit: 1, pages: 2 });
      expect(paged.body.data).toHaveLength(1);
    });

    it('clamps out-of-range paging and rejects non-numeric values and unknown enum values', async () => {
      const clamped = await acme.owner.get('/api/v1/users?limit=100000&page=0');
      expect(clamped.body.pagination.limit).toBe(100);
      expect(clamped.body.pagination.page).toBe(1);
      expect((await acme.owner.get('/api/v1/users?limit=ten')).status).toBe(400);
      expect((await acme.owner.get('/api/v1/users?status=sleeping')).status).toBe(400);
    });
  });

  describe('GET/PUT/DELETE /api/v1/users/:id', () => {
    it('another organization’s user id is 404 for every verb', async () => {
      const target = await createUser(acme.owner, 'agent');
      expect((await globex.owner.get(`/api/v1/users/${target.id}`)).status).toBe(404);
      expect((await globex.owner.put(`/api/v1/users/${target.id}`, { fullName: 'Hacked' })).status).toBe(404);
      expect((await globex.owner.del(`/api/v1/users/${target.id}`)).status).toBe(404);
      expect((await globex.owner.get('/api/v1/users/not-a-uuid')).status).toBe(404);
    });

    it('reads made at once (the gateway batches the calls, identity reads their users in one query) keep each organization apart', async () => {
      const target = await createUser(acme.owner, 'agent');
      const [acmeMe, globexMe] = [(await acme.owner.get('/api/v1/profile')).body.id, (await globex.owner.get('/api/v1/profile')).body.id];
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all([
          acme.owner.get(`/api/v1/users/${target.id}`),
          globex.owner.get(`/api/v1/users/${target.id}`),
          acme.owner.get(`/api/v1/users/${target.id.toUpperCase()}`),
          globex.owner.get(`/api/v1/users/${acmeMe}`),
          acme.owner.get('/api/v1/profile'),
          globex.owner.get('/api/v1/profile'),
          target.as.get('/api/v1/profile'),
          globex.owner.get('/api/v1/users/not-a-uuid'),
        ]);
        expect(answers.map((r) => [r.status, r.body.id])).toEqual([
          [200, target.id],
          [404, undefined],
          [200, target.id],
          [404, undefined],
          [200, acmeMe],
          [200, globexMe],
          [200, target.id],
          [404, undefined],
        ]);
      }
    });

    it('PUT updates fields (200) and a role change invalidates the user’s current tokens', async () => {
      const u = await createUser(acme.owner, 'agent');
      expect((await u.as.get('/api/v1/profile')).status).toBe(200);
      const res = await acme.owner.put(`/api/v1/users/${u.id}`, { fullName: 'Renamed', role: 'team_lead', department: 'ops' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expect.objectContaining({ id: u.id, fullName: 'Renamed', role: 'team_lead', department: 'ops' }));
      expect((await u.as.get('/api/v1/profile')).status).toBe(401);
      const again = await api.post('/api/v1/auth/login', { email: u.email, password });
      expect(again.body.user.role).toBe('team_lead');
    });

    it('PUT lets users edit their own name but not their own role', async () => {
      const u = await createUser(acme.owner, 'agent');
      expect((await u.as.put(`/api/v1/users/${u.id}`, { fullName: 'Me Myself' })).status).toBe(200);
      expect((await u.as.put(`/api/v1/users/${u.id}`, { role: 'admin' })).status).toBe(403);
    });

    it('PUT with an invalid role is 400', async () => {
      const u = await createUser(acme.owner, 'agent');
      const res = await acme.owner.put(`/api/v1/users/${u.id}`, { role: 'emperor' });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('role');
    });

    it('DELETE deactivates (204): the user stays listed as inactive, cannot sign in, tokens stop working', async () => {
      const u = await createUser(acme.owner, 'agent');
      const del = await acme.owner.del(`/api/v1/users/${u.id}`);
      expect(del.status).toBe(204);
      expect((await u.as.get('/api/v1/profile')).status).toBe(401);
      expect((await api.post('/api/v1/auth/login', { email: u.email, password })).status).toBe(401);
      const got = await acme.owner.get(`/api/v1/users/${u.id}`);
      expect(got.body.status).toBe('inactive');
      const inactive = await acme.owner.get('/api/v1/users?status=inactive');
      expect(inactive.body.data.map((x: { id: string }) => x.id)).toContain(u.id);
    });

    it('PUT gives a deactivated owner another role even when one other active owner is left (no active owner is lost)', async () => {
      const initech = await newOrg(api, 'Initech');
      const second = await createUser(initech.owner, 'owner');
      expect((await initech.owner.del(`/api/v1/users/${second.id}`)).status).toBe(204);
      const res = await initech.owner.put(`/api/v1/users/${second.id}`, { role: 'agent' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expect.objectContaining({ id: second.id, role: 'agent', status: 'inactive' }));
    });

    it('DELETE of yourself is 403, and the last owner cannot be removed', async () => {
      expect((await acme.owner.del(`/api/v1/users/${acme.user.id}`)).status).toBe(403);
      const admin = await createUser(acme.owner, 'admin');
      expect((await admin.as.del(`/api/v1/users/${acme.user.id}`)).status).toBe(403);
    });
  });

  describe('teams', () => {
    it('POST /teams creates a team with members of the org (201) and GET /teams lists it with memberCount', async () => {
      const a = await createUser(acme.owner, 'agent');
      const b = await createUser(acme.owner, 'agent');
      const res = await acme.owner.post('/api/v1/teams', { name: 'Sales North', description: 'Hanoi desk', memberIds: [a.id, b.id] });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(
        expect.objectContaining({
          id: expect.any(String),
          name: 'Sales North',
          description: 'Hanoi desk',
          memberCount: 2,
          createdAt: expect.any(String),
        }),
      );
      const list = await acme.owner.get('/api/v1/teams');
      expect(list.status).toBe(200);
      expect(list.body).toEqual([expect.objectContaining({ id: res.body.id, name: 'Sales North', memberCount: 2 })]);
      expect((await globex.owner.get('/api/v1/teams')).body).toEqual([]);
    });

    it('rejects members from another organization or malformed ids (400 naming memberIds)', async () => {
      const outsider = await createUser(globex.owner, 'agent');
      const res = await acme.owner.post('/api/v1/teams', { name: 'Mixed', memberIds: [outsider.id] });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('memberIds');
      expect((await acme.owner.post('/api/v1/teams', { name: 'Bad', memberIds: ['x'] })).status).toBe(400);
      expect((await acme.owner.post('/api/v1/teams', { description: 'no name' })).status).toBe(400);
    });

    it('PUT/DELETE /teams/:id update and remove; other orgs get 404; agents get 403', async () => {
      const t = await acme.owner.post('/api/v1/teams', { name: 'Temp' });
      const put = await acme.owner.put(`/api/v1/teams/${t.body.id}`, { name: 'Renamed', memberIds: [acme.user.id] });
      expect(put.status).toBe(200);
      expect(put.body).toEqual(expect.objectContaining({ name: 'Renamed', memberCount: 1, memberIds: [acme.user.id] }));
      expect((await globex.owner.put(`/api/v1/teams/${t.body.id}`, { name: 'X' })).status).toBe(404);
      expect((await globex.owner.get(`/api/v1/teams/${t.body.id}`)).status).toBe(404);
      expect((await globex.owner.del(`/api/v1/teams/${t.body.id}`)).status).toBe(404);
      const agent = await createUser(acme.owner, 'agent');
      expect((await agent.as.post('/api/v1/teams', { name: 'Nope' })).status).toBe(403);
      expect((await acme.owner.del(`/api/v1/teams/${t.body.id}`)).status).toBe(204);
      expect((await acme.owner.get(`/api/v1/teams/${t.body.id}`)).status).toBe(404);
    });
  });
});
