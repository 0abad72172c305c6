import { newOrg, client, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { startReceiver, type Receiver } from './support';

// With the default (empty) WEBHOOK_ALLOWED_PRIVATE_ADDRESSES, no spelling of a loopback, private or
// link-local address can be saved as a webhook URL, and nothing ever connects to the receiver listening on
// 127.0.0.1. Only loopback is used: a failure of the guard would reach the receiver, nothing else.
describe('SSRF guard with an empty allow-list', () => {
  let stack: Stack;
  let owner: Client;
  let rx: Receiver;

  beforeAll(async () => {
    stack = await startStack({ services: ['webhooks'] });
    owner = (await newOrg(client(stack.url), 'Acme')).owner;
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
    await stack?.stop();
  });

  it.each([
    '127.0.0.1',
    '0x7f.1',
    '0x7f.0.0.1',
    '2130706433',
    '017700000001',
    '0177.0.0.1',
    '127.1',
    '127.0.1',
    '0x7f000001',
    '127.0.0.1.',
    '127.42.42.42',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[0:0:0:0:0:ffff:127.0.0.1]',
    '[::1]',
    '[0:0:0:0:0:0:0:1]',
    '[::]',
    '0.0.0.0',
    '0',
    'localhost',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.0.1',
    '169.254.169.254',
    '[fe80::1]',
    '[fc00::1]',
    '[::ffff:169.254.169.254]',
    '100.64.0.1',
    '224.0.0.1',
  ])('refuses http://%s as a webhook URL (400) without connecting', async (host) => {
    const before = rx.connections;
    const res = await owner.post('/api/v1/webhook-settings', { url: `http://${host}:${rx.port}/hook`, events: ['contact.created'] });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0]).toEqual({ field: 'url', message: expect.stringMatching(/webhooks are not sent there/) });
    expect(rx.connections).toBe(before);
  });

  it('nothing was saved and nothing ever connected', async () => {
    expect((await owner.get('/api/v1/webhook-settings')).body).toEqual([]);
    expect(rx.connections).toBe(0);
    expect(rx.received).toEqual([]);
  });
});
