import type { AddressInfo } from 'node:net';
import express from 'express';
import helmet from 'helmet';
import { securityHeaders } from './security-headers';

async function headersOf(mw: express.RequestHandler): Promise<Record<string, string>> {
  const app = express();
  app.use(mw);
  app.get('/', (_req, res) => res.json({ ok: true }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const out = Object.fromEntries(res.headers);
    delete out.date;
    return out;
  } finally {
    server.close();
  }
}

it("securityHeaders sets exactly helmet()'s default headers (and drops X-Powered-By)", async () => {
  const ours = await headersOf(securityHeaders());
  expect(ours).toEqual(await headersOf(helmet()));
  expect(ours['content-security-policy']).toContain("default-src 'self'");
  expect(ours['strict-transport-security']).toBeDefined();
  expect(ours['x-powered-by']).toBeUndefined();
});
