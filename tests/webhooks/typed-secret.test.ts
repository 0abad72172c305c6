import { createHmac } from 'node:crypto';
import { client, newOrg, type Client } from '../support/http';
import { startStack, type Stack } from '../support/stack';
import { eventContact, sleep, startProducer, startReceiver, verifySignature, type Received, type Receiver } from './support';

type Producer = Awaited<ReturnType<typeof startProducer>>;

/**
 * Standard Webhooks verification computed here, independently of the service: HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed by the typed secret's UTF-8 bytes.
 */
function signedWithText(secret: string, r: Received): boolean {
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${r.id}.${r.timestamp}.${r.body}`).digest('base64');
  return r.signature.split(' ').includes(`v1,${expected}`);
}

// A secret the customer types in their own format (16–128 printable characters) signs with its UTF-8
// bytes; a `whsec_` secret keeps its base64 meaning; neither is ever echoed back.
describe('webhook secrets typed by the customer', () => {
  let stack: Stack;
  let owner: Client;
  let orgId: string;
  let rx: Receiver;
  let producer: Producer;
  const EVENTS = ['contact.created'];

  beforeAll(async () => {
    stack = await startStack({
      services: ['webhooks'],
      serviceEnv: { webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1', WEBHOOK_RETRY_SCHEDULE: '200ms,500ms,1s' } },
    });
    const org = await newOrg(client(stack.url), 'Acme');
    owner = org.owner;
    orgId = org.user.orgId;
    rx = await startReceiver();
    producer = await startProducer(stack.env.EVENTS_EXCHANGE);
  });
  afterAll(async () => {
    await producer?.close();
    await rx?.close();
    await stack?.stop();
  });

  const waitFor = async (path: string, count: number) => {
    const until = Date.now() + 10_000;
    while (rx.at(path).length < count && Date.now() < until) await sleep(50);
    return rx.at(path);
  };

  it('POST /webhook-settings with a typed secret: 201 without the secret; test sends and events are signed with its UTF-8 bytes', async () => {
    // Vietnamese letters take two or three bytes each: the key is the UTF-8 bytes, not Latin-1 or UTF-16.
    const typed = 'Mật khẩu webhook của shop Lan 2025!';
    const res = await owner.post('/api/v1/webhook-settings', { url: rx.url('/typed'), events: EVENTS, secret: typed });
    expect(res.status).toBe(201);
    expect(res.body.secret).toBeUndefined();
    expect(JSON.stringify(res.body)).not.toContain('Mật khẩu');

    const test = await owner.post(`/api/v1/webhook-settings/${res.body.id}/test`);
    expect(test.body.ok).toBe(true);
    await producer.emit('contact.created', orgId, { contact: eventContact({ id: 'c0ffee00-0000-4000-8000-000000000009', name: 'Ada' }) });
    const got = await waitFor('/typed', 2);
    expect(got.map((r) => r.json.type).sort()).toEqual(['contact.created', 'webhook.test']);
    for (const r of got) {
      expect(signedWithText(typed, r)).toBe(true);
      // Not the whsec_ reading of the same characters, nor another string.
      expect(signedWithText(`${typed} `, r)).toBe(false);
    }

    for (const view of [await owner.get(`/api/v1/webhook-settings/${res.body.id}`), await owner.get('/api/v1/webhook-settings')]) {
      expect(view.status).toBe(200);
      expect(JSON.stringify(view.body)).not.toContain('Mật khẩu');
    }
  });

  it('PUT /webhook-settings/:id rotates to a typed secret of exactly 16 and of exactly 128 characters', async () => {
    const hook = (await owner.post('/api/v1/webhook-settings', { url: rx.url('/rotate'), events: EVENTS })).body;
    for (const typed of ['sixteen-chars-ok', `${'x'.repeat(127)}é`]) {
      expect([...typed].length === 16 || [...typed].length === 128).toBe(true);
      const res = await owner.put(`/api/v1/webhook-settings/${hook.id}`, { secret: typed });
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).not.toContain(typed);
      expect((await owner.post(`/api/v1/webhook-settings/${hook.id}/test`)).body.ok).toBe(true);
      const last = rx.at('/rotate').at(-1)!;
      expect(signedWithText(typed, last)).toBe(true);
      expect(verifySignature(hook.secret, last)).toBe(false);
    }
  });

  it('a whsec_ secret still means base64 of its key bytes', async () => {
    const chosen = `whsec_${Buffer.alloc(40, 3).toString('base64')}`;
    const res = await owner.post('/api/v1/webhook-settings', { url: rx.url('/whsec'), events: EVENTS, secret: chosen });
    expect(res.status).toBe(201);
    expect(res.body.secret).toBeUndefined();
    expect((await owner.post(`/api/v1/webhook-settings/${res.body.id}/test`)).body.ok).toBe(true);
    const got = rx.at('/whsec')[0];
    expect(verifySignature(chosen, got)).toBe(true);
    expect(signedWithText(chosen, got)).toBe(false);
  });

  it.each([
    ['15 characters', 'a'.repeat(15)],
    ['129 characters', 'a'.repeat(129)],
    ['15 two-byte characters (30 bytes)', 'é'.repeat(15)],
    ['129 emoji', '😀'.repeat(129)],
    ['a line break', 'first line is ok\nsecond'],
    ['a control character', 'sixteen chars \u0007!'],
    ['an unpaired surrogate', 'sixteen characters \ud800'],
    ['whsec_ with a key that is not base64', 'whsec_not base64 but long enough'],
    ['whsec_ with 16 bytes', `whsec_${Buffer.alloc(16).toString('base64')}`],
  ])('POST and PUT: 400 naming secret for %s, never echoing it', async (_name, secret) => {
    const created = await owner.post('/api/v1/webhook-settings', { url: rx.url('/bad'), events: EVENTS, secret });
    expect(created.status).toBe(400);
    expect(created.body.error.details[0].field).toBe('secret');
    expect(JSON.stringify(created.body)).not.toContain(secret);
    const hook = (await owner.post('/api/v1/webhook-settings', { url: rx.url('/bad'), events: EVENTS })).body;
    const updated = await owner.put(`/api/v1/webhook-settings/${hook.id}`, { secret });
    expect(updated.status).toBe(400);
    expect(updated.body.error.details[0].field).toBe('secret');
    expect((await owner.del(`/api/v1/webhook-settings/${hook.id}`)).status).toBe(204);
  });
});
