import { client, Client, newOrg } from '../support/http';
import { startStack, type Stack } from '../support/stack';

// An account's proxy is a destination a tenant chooses: the connector would dial it from inside the
// deployment's network. Its host must be a public address, or one the operator allowed with
// CONNECTOR_ALLOWED_PRIVATE_ADDRESSES; a refused one is a 400 naming proxyUrl and nothing is saved. (The
// sandbox driver dials nothing; the real driver's dial-time check is in services/chatnet-connector/test/proxy.test.ts.)
describe('chat-network account proxies: the SSRF guard', () => {
  let stack: Stack;
  let owner: Client;

  beforeAll(async () => {
    stack = await startStack({
      services: ['chatnet-connector'],
      serviceEnv: { 'chatnet-connector': { CONNECTOR_ALLOWED_PRIVATE_ADDRESSES: '10.1.2.3' } },
    });
    owner = (await newOrg(client(stack.url), 'Acme')).owner;
  });
  afterAll(() => stack?.stop());

  const accountCount = async () => (await owner.get('/api/v1/chatnet-accounts')).body.length as number;

  const refused: Array<[string, RegExp]> = [
    ['http://127.0.0.1:3128', /^127\.0\.0\.1 is a loopback address; proxy connections are not sent there$/],
    ['http://u:secret@0x7f.1:3128', /^127\.0\.0\.1 is a loopback address/],
    ['socks5://0x7f.1:1080', /^127\.0\.0\.1 is a loopback address/],
    ['socks5://2130706433:1080', /^127\.0\.0\.1 is a loopback address/],
    ['socks5h://017700000001:1080', /^127\.0\.0\.1 is a loopback address/],
    ['http://[::ffff:127.0.0.1]:3128', /127\.0\.0\.1, a loopback address/],
    ['socks5://[::1]:1080', /^::1 is a loopback address/],
    ['socks5://169.254.169.254:1080', /^169\.254\.169\.254 is a linkLocal address/],
    ['http://[fe80::1]:3128', /^fe80::1 is a linkLocal address/],
    ['http://10.1.2.4:3128', /^10\.1\.2\.4 is a private address/],
    ['http://localhost:3128', /^localhost resolves to .*, a loopback address/],
  ];

  it.each(refused)('POST with proxyUrl %s is 400 naming proxyUrl and creates nothing', async (proxyUrl, message) => {
    const before = await accountCount();
    const res = await owner.post('/api/v1/chatnet-accounts', { displayName: 'Proxied line', proxyUrl });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'proxyUrl', message: expect.stringMatching(message) }]);
    expect(JSON.stringify(res.body)).not.toContain('secret');
    expect(await accountCount()).toBe(before);
  });

  it.each(refused)('PUT proxy %s is 400 naming proxyUrl and keeps the old proxy', async (proxyUrl, message) => {
    const id = (await owner.post('/api/v1/chatnet-accounts', { displayName: 'Line', proxyUrl: 'http://10.1.2.3:3128' })).body.id;
    const res = await owner.put(`/api/v1/chatnet-accounts/${id}/proxy`, { proxyUrl });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'proxyUrl', message: expect.stringMatching(message) }]);
    expect((await owner.get(`/api/v1/chatnet-accounts/${id}`)).body.hasProxy).toBe(true);
  });

  it('an allow-listed private proxy and a public host that does not resolve yet are accepted', async () => {
    for (const proxyUrl of ['http://u:p@10.1.2.3:3128', 'socks5://proxy.example.invalid:1080']) {
      const res = await owner.post('/api/v1/chatnet-accounts', { displayName: 'Allowed proxy', proxyUrl });
      expect(res.status).toBe(201);
      expect((await owner.get(`/api/v1/chatnet-accounts/${res.body.id}`)).body.hasProxy).toBe(true);
    }
  });
});
