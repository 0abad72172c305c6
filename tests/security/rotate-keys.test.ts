import { execFile } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { eventually } from '@crm/testing';
import { client, newOrg } from '../support/http';
import { startStack, type ServiceName, type Stack } from '../support/stack';
import { connectPatiently } from '../support/patient-client';

// `npm run rotate-keys` re-encrypts every stored secret under the current ENCRYPTION_KEY: afterwards the former key
// can be removed and everything still decrypts (issue #27 item 7). Secrets of four services are written under key A,
// rotated to key B, and the services restarted with B alone.
const root = path.resolve(__dirname, '../..');
const SECRET_SERVICES: ServiceName[] = ['ai', 'chatnet-connector', 'webhooks', 'automation', 'crm'];

function rotate(stack: Stack, env: Record<string, string>): Promise<{ code: number; out: string }> {
  const urls = Object.fromEntries(SECRET_SERVICES.map((s) => [`${s.replace(/-/g, '_').toUpperCase()}_DATABASE_URL`, stack.databaseUrl(s)]));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(root, 'scripts/rotate-keys.mjs')],
      { env: { PATH: process.env.PATH, ...urls, ...env }, encoding: 'utf8' },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

describe('npm run rotate-keys', () => {
  let stack: Stack;
  const keyB = randomBytes(32).toString('base64');
  let keyA: string;
  const received: { id: string; ts: string; sig: string; body: string }[] = [];
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({
        id: String(req.headers['webhook-id']),
        ts: String(req.headers['webhook-timestamp']),
        sig: String(req.headers['webhook-signature']),
        body,
      });
      res.writeHead(204).end();
    });
  });

  beforeAll(async () => {
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    stack = await startStack({
      services: SECRET_SERVICES,
      env: { SIGNUP_ENABLED: 'true', WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1', CONNECTOR_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1' },
    });
    keyA = stack.env.ENCRYPTION_KEY;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    receiver.close();
  });

  it('re-encrypts webhook secrets, AI keys and proxy URLs so the old key can go', async () => {
    const { owner } = await newOrg(client(stack.url), 'Rotation Org');
    const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    const hook = await owner.post('/api/v1/webhook-settings', { url, events: ['contact.created'] });
    expect(hook.status).toBe(201);
    expect((await owner.put('/api/v1/ai/providers/openai', { apiKey: 'sk-rotation-test-1234' })).status).toBe(200);
    expect((await owner.post('/api/v1/chatnet-accounts', { displayName: 'Proxied', proxyUrl: 'http://127.0.0.1:3128' })).status).toBe(201);

    // With key B alone, before the rotation, the script refuses: nothing decrypts.
    const early = await rotate(stack, { ENCRYPTION_KEY: keyB, ENCRYPTION_KEYS_OLD: '' });
    expect(early.code).not.toBe(0);
    expect(early.out).toMatch(/does not decrypt with the keys given/);

    const run = await rotate(stack, { ENCRYPTION_KEY: keyB, ENCRYPTION_KEYS_OLD: `1:${keyA}` });
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/webhooks: webhook_settings\.secret_enc: 1 re-encrypted/);
    expect(run.out).toMatch(/ai: provider_settings\.api_key_enc: 1 re-encrypted/);
    expect(run.out).toMatch(/chatnet-connector: chatnet_accounts\.proxy_enc: 1 re-encrypted/);
    expect(run.out).toMatch(/former keys can be removed/);

    // Key B alone now reads every secret (the script decrypts each one)…
    const after = await rotate(stack, { ENCRYPTION_KEY: keyB, ENCRYPTION_KEYS_OLD: '' });
    expect(after.code).toBe(0);
    expect(after.out).toMatch(/webhooks: webhook_settings\.secret_enc: 0 re-encrypted, 1 already under the current key/);
    const db = await connectPatiently(stack.databaseUrl('webhooks'));
    try {
      // Written under key B's id, which stays B's whatever its place in the configuration.
      expect((await db.query('SELECT secret_enc FROM webhook_settings')).rows[0].secret_enc).toMatch(/^k[0-9a-f]{8}:/);
    } finally {
      await db.end();
    }

    // …and so does the service: restarted with key B only, its test delivery is signed with the same secret.
    await stack.restart('webhooks', { ENCRYPTION_KEY: keyB, ENCRYPTION_KEYS_OLD: '' });
    expect((await owner.post(`/api/v1/webhook-settings/${hook.body.id}/test`)).status).toBeLessThan(300);
    const got = await eventually(async () => received[0]);
    const secret = Buffer.from(String(hook.body.secret).replace(/^whsec_/, ''), 'base64');
    const expected = `v1,${createHmac('sha256', secret).update(`${got.id}.${got.ts}.${got.body}`).digest('base64')}`;
    expect(got.sig.split(' ')).toContain(expected);
  }, 90_000);
});
