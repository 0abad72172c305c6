import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';

// Every URL a client gives the API is shown back to browsers or dialled by a service, so only http(s) is
// accepted: javascript:, data:, file: and friends are a 400 naming the field, before any service is called.
describe('URL fields accept only http(s) URLs', () => {
  let stack: Stack;
  let owner: Client;
  let userId: string;
  const REFUSED = [
    'javascript:alert(document.cookie)',
    'JavaScript:alert(1)',
    ' data:text/html,<script>alert(1)</script>',
    'file:///etc/passwd',
    'ftp://example.com/a.png',
    'vbscript:msgbox',
    '//example.com/a.png',
    'not a url',
  ];

  beforeAll(async () => {
    stack = await startStack({ services: ['chatnet-connector'] });
    const org = await newOrg(client(stack.url), 'Acme');
    owner = org.owner;
    userId = org.user.id;
  });
  afterAll(() => stack?.stop());

  describe('PUT /api/v1/users/:id {avatar}', () => {
    it.each(REFUSED)('400 naming avatar for %j', async (avatar) => {
      const res = await owner.put(`/api/v1/users/${userId}`, { avatar });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_argument');
      expect(res.body.error.details).toEqual([{ field: 'avatar', message: 'must be an http or https URL (or empty)' }]);
      expect((await owner.get(`/api/v1/users/${userId}`)).body.avatar).toBeNull();
    });

    it('stores an https or http URL, and "" clears it (shown as null)', async () => {
      const set = await owner.put(`/api/v1/users/${userId}`, { avatar: 'https://cdn.example.com/a.png' });
      expect(set.status).toBe(200);
      expect((await owner.get(`/api/v1/users/${userId}`)).body.avatar).toBe('https://cdn.example.com/a.png');
      expect((await owner.put(`/api/v1/users/${userId}`, { avatar: 'http://cdn.example.com/b.png' })).status).toBe(200);
      expect((await owner.put(`/api/v1/users/${userId}`, { avatar: '' })).status).toBe(200);
      expect((await owner.get(`/api/v1/users/${userId}`)).body.avatar).toBeNull();
    });

    it('400 for a non-string avatar', async () => {
      const res = await owner.put(`/api/v1/users/${userId}`, { avatar: 42 });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ field: 'avatar', message: 'must be a string' }]);
    });
  });

  describe('sandbox control: scan {avatarUrl} and inbound {fromAvatar}', () => {
    const account = '7d1f8a4e-0000-4000-8000-000000000000';

    it.each(REFUSED)('400 naming the field for %j', async (bad) => {
      const scan = await owner.post(`/sandbox/accounts/${account}/scan`, { avatarUrl: bad });
      expect(scan.status).toBe(400);
      expect(scan.body.error.details).toEqual([{ field: 'avatarUrl', message: 'must be an http or https URL (or empty)' }]);
      const inbound = await owner.post(`/sandbox/accounts/${account}/inbound`, { fromUid: 'u1', content: 'hi', fromAvatar: bad });
      expect(inbound.status).toBe(400);
      expect(inbound.body.error.details).toEqual([{ field: 'fromAvatar', message: 'must be an http or https URL (or empty)' }]);
    });

    it('an https URL passes validation and reaches the connector (404 for an account that does not exist)', async () => {
      const scan = await owner.post(`/sandbox/accounts/${account}/scan`, { avatarUrl: 'https://cdn.example.com/a.png' });
      expect(scan.status).toBe(404);
      const inbound = await owner.post(`/sandbox/accounts/${account}/inbound`, {
        fromUid: 'u1',
        content: 'hi',
        fromAvatar: 'https://cdn.example.com/a.png',
      });
      expect(inbound.status).toBe(404);
    });
  });

  it('POST /api/v1/webhook-settings {url}: 400 naming url for a javascript: or data: URL', async () => {
    for (const url of ['javascript:alert(1)', 'data:text/plain,hi']) {
      const res = await owner.post('/api/v1/webhook-settings', { url, events: ['contact.created'] });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ field: 'url', message: 'must be an http or https URL' }]);
    }
  });
});
