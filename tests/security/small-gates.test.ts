import http from 'node:http';
import { client } from '../support/http';
import { startStack, type Stack } from '../support/stack';

// Small gates of issue #27 item 8: what an anonymous caller learns or steers.
describe('anonymous routes tell and steer nothing they should not', () => {
  let stack: Stack;
  const PUBLIC_URL = 'https://crm.example.test';

  beforeAll(async () => {
    stack = await startStack({ env: { PUBLIC_URL } });
  }, 60_000);
  afterAll(() => stack?.stop());

  /** A GET with a Host header of the caller's choosing (fetch does not let a caller set it). */
  const getWithHost = (path: string, host: string) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const url = new URL(stack.url);
      http
        .get({ hostname: url.hostname, port: url.port, path, headers: { host } }, (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        })
        .on('error', reject);
    });

  it('the OpenAPI documents name PUBLIC_URL as their server, whatever Host the request carries', async () => {
    for (const path of ['/openapi.json', '/api/public/openapi.json']) {
      const doc = await getWithHost(path, 'attacker.example');
      expect(doc.status).toBe(200);
      expect(doc.body.servers).toEqual([{ url: PUBLIC_URL }]);
    }
  });

  it('/setup/status answers only whether setup is required, not how many organizations exist', async () => {
    const res = await client(stack.url).get('/api/v1/setup/status');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ setupRequired: expect.any(Boolean) });
  });
});
