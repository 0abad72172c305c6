import path from 'node:path';
import express, { Router } from 'express';

const PUBLIC_DIR = path.join(__dirname, '..', '..', 'public');

/**
 * The web pages the gateway serves: the sign-in page and the settings pages (API & webhooks, AI
 * assistant, inbox). They are static; everything they show comes from the API with the signed-in
 * user's token. The API's documentation is served by docs.routes.ts.
 */
export function pageRoutes(): Router {
  const r = Router();
  const page = (file: string) => (_req: express.Request, res: express.Response) => res.sendFile(path.join(PUBLIC_DIR, file));
  r.get('/', (_req, res) => res.redirect('/settings/dev/api'));
  r.get('/login', page('login.html'));
  r.get('/settings/dev/api', page('settings-api.html'));
  r.get('/settings/ai', page('settings-ai.html'));
  r.get('/settings/inbox', page('settings-inbox.html'));
  r.use('/assets', express.static(PUBLIC_DIR, { index: false, maxAge: '5m' }));
  return r;
}
