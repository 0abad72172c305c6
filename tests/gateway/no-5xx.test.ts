import { Client, client, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';
import { publicClient } from '../crm/crm-support';

// Each input below once answered 500 or 503 (issue #11, item 7). A client's bad input is a 400 naming the
// field, an out-of-range page is clamped, and a known path with the wrong method is a 405.
describe('no input gives a 5xx', () => {
  let stack: Stack;
  let owner: Client;
  let pub: Client;

  beforeAll(async () => {
    stack = await startStack({ services: ['crm', 'automation'] });
    const api = client(stack.url);
    owner = (await newOrg(api, 'Acme')).owner;
    pub = await publicClient(api, owner);
  });
  afterAll(() => stack.stop());

  const fieldsOf = (body: { error: { details?: { field: string }[] } }) => (body.error.details ?? []).map((d) => d.field);

  describe('impossible dates and dates outside years 1-9999 are a 400 naming the field', () => {
    const lists = [
      '/api/v1/contacts',
      '/api/v1/appointments',
      '/api/v1/analytics/conversion-funnel',
      '/api/v1/analytics/team-performance',
      '/api/v1/analytics/response-time',
    ];
    it.each(lists)('GET %s?dateFrom=9999-99-99', async (path) => {
      const res = await owner.get(`${path}?dateFrom=9999-99-99`);
      expect(res.status).toBe(400);
      expect(fieldsOf(res.body)).toEqual(['dateFrom']);
    });
    it.each(lists)('GET %s?dateTo=+275760-09-13T00:00:00.000Z (the last instant JavaScript has)', async (path) => {
      const res = await owner.get(`${path}?dateTo=${encodeURIComponent('+275760-09-13T00:00:00.000Z')}`);
      expect(res.status).toBe(400);
      expect(fieldsOf(res.body)).toEqual(['dateTo']);
    });
    it.each(lists)('GET %s?dateFrom=0000-01-01 (year 0)', async (path) => {
      const res = await owner.get(`${path}?dateFrom=0000-01-01`);
      expect(res.status).toBe(400);
      expect(fieldsOf(res.body)).toEqual(['dateFrom']);
    });
    it('GET /api/public/appointments?from=9999-99-99 and ?to=2024-02-30', async () => {
      const from = await pub.get('/api/public/appointments?from=9999-99-99');
      expect(from.status).toBe(400);
      expect(fieldsOf(from.body)).toEqual(['from']);
      const to = await pub.get('/api/public/appointments?to=2024-02-30');
      expect(to.status).toBe(400);
      expect(fieldsOf(to.body)).toEqual(['to']);
    });
  });

  describe('the widest valid dates still answer', () => {
    it.each([
      '/api/v1/contacts',
      '/api/v1/appointments',
      '/api/v1/analytics/conversion-funnel',
      '/api/v1/analytics/team-performance',
      '/api/v1/analytics/response-time',
    ])('GET %s from 0001-01-01 to 9999-12-31 is 200', async (path) => {
      expect((await owner.get(`${path}?dateFrom=0001-01-01&dateTo=9999-12-31`)).status).toBe(200);
      expect((await owner.get(`${path}?dateTo=9999-12-31`)).status).toBe(200);
    });
    it('the analytics period of 9999-12-31 ends on its last millisecond', async () => {
      const res = await owner.get('/api/v1/analytics/response-time?dateFrom=9999-12-31&dateTo=9999-12-31');
      expect(res.status).toBe(200);
      expect(res.body.period.from).toBe('9999-12-31T00:00:00.000Z');
      // The exclusive end stops at the last millisecond of year 9999 (year 10000 is not a PostgreSQL ISO input).
      expect(res.body.period.to).toMatch(/^9999-12-31T23:59:59\.99\dZ$/);
    });
    it('GET /api/public/appointments from 0001-01-01 to 9999-12-31 is 200', async () => {
      expect((await pub.get('/api/public/appointments?from=0001-01-01&to=9999-12-31')).status).toBe(200);
    });
  });

  describe('page and limit beyond int32 are clamped', () => {
    it('GET /api/v1/users?page=999999999999 is an empty last page, not a negative OFFSET', async () => {
      const res = await owner.get('/api/v1/users?page=999999999999&limit=99999999999999999999');
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
      expect(res.body.pagination.limit).toBe(100);
      expect(res.body.pagination.page).toBeLessThanOrEqual(2 ** 31 - 1);
    });
    it('GET /api/v1/contacts?page=<400 digits> is 200 too', async () => {
      const res = await owner.get(`/api/v1/contacts?page=${'9'.repeat(400)}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
    });
    it('a non-numeric page is still a 400 naming it', async () => {
      const res = await owner.get('/api/v1/users?page=1e3');
      expect(res.status).toBe(400);
      expect(fieldsOf(res.body)).toEqual(['page']);
    });
  });

  describe('NUL bytes and lone surrogates are a 400 naming the field', () => {
    it('GET /api/v1/automation/templates?category=a%00b', async () => {
      const res = await owner.get('/api/v1/automation/templates?category=a%00b');
      expect(res.status).toBe(400);
      expect(fieldsOf(res.body)).toEqual(['category']);
    });
    it('GET /api/public/contacts?search=a%00b', async () => {
      const res = await pub.get('/api/public/contacts?search=a%00b');
      expect(res.status).toBe(400);
      expect(fieldsOf(res.body)).toEqual(['search']);
    });
    it('GET /api/v1/analytics/team-performance?departmentId=a%00b is a 400, not a 503', async () => {
      const res = await owner.get('/api/v1/analytics/team-performance?departmentId=a%00b');
      expect(res.status).toBe(400);
      expect(fieldsOf(res.body)).toEqual(['departmentId']);
    });
    it('POST /api/v1/contacts with NUL and a lone surrogate in the body names both fields', async () => {
      const res = await owner.post('/api/v1/contacts', '{"name":"Ann\\u0000","notes":"x\\ud800y","tags":["ok","\\udc00"]}');
      expect(res.status).toBe(400);
      expect(fieldsOf(res.body).sort()).toEqual(['name', 'notes', 'tags.1']);
    });
    it('a NUL in a body key is named too', async () => {
      const res = await owner.post('/api/v1/customer-lists', { name: 'L', criteria: { 'a\u0000': 1 } });
      expect(res.status).toBe(400);
      expect(fieldsOf(res.body)).toEqual(['criteria']);
    });
    it('well-formed non-ASCII text (an emoji pair, Vietnamese) is still stored', async () => {
      const res = await owner.post('/api/v1/contacts', { name: 'Nguyễn Văn 😀' });
      expect(res.status).toBe(201);
      expect(res.body.name).toBe('Nguyễn Văn 😀');
    });
  });

  describe('a known path with a wrong method is a 405 with Allow, before authentication', () => {
    it.each([
      ['PATCH', '/api/v1/setup/status', 'GET, HEAD'],
      ['DELETE', '/api/v1/profile', 'GET, HEAD'],
      ['PUT', '/api/v1/auth/login', 'POST'],
      ['PATCH', '/api/v1/contacts/123', 'DELETE, GET, HEAD, PUT'],
      ['DELETE', '/api/public/contacts', 'GET, HEAD, POST'],
    ])('%s %s without credentials → 405, Allow: %s', async (method, path, allow) => {
      const res = await fetch(stack.url + path, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
      const body = await res.json();
      expect(body).toEqual({
        error: { code: 'method_not_allowed', message: `${method} is not allowed on ${path}; use ${allow}` },
        requestId: expect.any(String),
      });
    });
    it('HEAD of a GET route is not a 405, and an unknown path stays 401 without a token', async () => {
      expect((await fetch(`${stack.url}/api/v1/setup/status`, { method: 'HEAD' })).status).toBe(200);
      expect((await fetch(`${stack.url}/api/v1/no-such-thing`, { method: 'PATCH' })).status).toBe(401);
    });
    it('OPTIONS is left to CORS and express (no 405)', async () => {
      expect((await fetch(`${stack.url}/api/v1/profile`, { method: 'OPTIONS' })).status).not.toBe(405);
    });
  });
});
