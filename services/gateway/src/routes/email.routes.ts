import { Request, Router } from 'express';
import { z } from 'zod';
import { automationRules as rules } from '@crm/validation';
import type { RouteDeps, ServiceRoutes } from './deps';
import { channelOut, suppressionOut } from './email.out';
import { byRule } from '../http/by-rule';
import { sendError } from '../http/errors';
import { ctxOf } from '../http/principal';
import { body, pageParams, pathParam } from '../http/validate';

/**
 * Email campaigns' settings and their public links (all owned by the automation service): the org's SMTP
 * channel (`/settings/email`, the password write-only), its suppression list, and, without sign-in, the
 * unsubscribe link (`/u/<token>`) and the open pixel (`/o/<token>.gif`) every campaign email carries. The
 * public links are rate-limited per IP like the other routes without a credential; their token is checked by
 * automation (an HMAC), and a token that does not verify is a 404.
 */

const text = (max: number) => z.string({ error: 'must be a string' }).max(max, `must be at most ${max} characters`);

export const ChannelBody = z.object({
  host: text(rules.SMTP_HOST_MAX).optional(),
  port: byRule(z.number({ error: rules.SMTP_PORT_MESSAGE }), rules.smtpPort).optional(),
  secure: z.boolean({ error: 'must be true or false' }).optional(),
  user: text(rules.SMTP_USER_MAX).optional(),
  // Write-only: omitted keeps the stored password (for the same host); '' removes it.
  password: text(rules.SMTP_PASSWORD_MAX).optional(),
  fromAddress: text(rules.SMTP_FROM_ADDRESS_MAX).optional(),
  fromName: text(rules.SMTP_FROM_NAME_MAX).optional(),
});

export const TestBody = z.object({ to: z.string({ error: 'is required' }).max(320, 'must be at most 320 characters') });

/** For the confirmation page: the address comes from a recipient row and must never become markup. */
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** 1×1 transparent GIF. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** The page an unsubscribe link opens: the address, and a button that posts to the same link. */
function confirmPage(email: string): string {
  return page(
    'Unsubscribe?',
    `Stop sending these emails to ${email}?`,
    '<form method="post"><button type="submit" style="font-size:1rem;padding:.5rem 1rem">Unsubscribe</button></form>',
  );
}

function page(title: string, message: string, after = ''): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222"><h1 style="font-size:1.4rem">${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>${after}</body></html>`;
}

export function emailRoutes({ clients, linkLimit }: RouteDeps): ServiceRoutes {
  const r = Router();
  const automation = () => clients.automation;

  r.get('/settings/email', async (req, res) => {
    res.json(channelOut(await automation().GetEmailChannel({}, ctxOf(req, res))));
  });
  r.put('/settings/email', async (req, res) => {
    res.json(channelOut(await automation().UpdateEmailChannel(body(req, ChannelBody), ctxOf(req, res))));
  });
  r.delete('/settings/email', async (req, res) => {
    await automation().DeleteEmailChannel({}, ctxOf(req, res));
    res.status(204).end();
  });
  r.post('/settings/email/test', async (req, res) => {
    const out = await automation().TestEmailChannel(body(req, TestBody), ctxOf(req, res));
    // The mail server's refusal is the upstream's answer, so a 502 that carries it (never a credential).
    if (!out.delivered) return sendError(res, 502, 'smtp_error', out.error || 'The mail server did not accept the message');
    res.json({ delivered: true });
  });

  r.get('/email-suppressions', async (req, res) => {
    const out = await automation().ListEmailSuppressions(pageParams(req, 50), ctxOf(req, res));
    res.json({ data: out.data.map(suppressionOut), pagination: out.pagination });
  });
  r.delete('/email-suppressions/:email', async (req, res) => {
    await automation().DeleteEmailSuppression({ email: req.params.email }, ctxOf(req, res));
    res.status(204).end();
  });

  const root = Router();
  const token = (req: Request) => ({ token: pathParam(req, 'token') });
  // The link in the email body opens a page that asks; only its button (a POST) unsubscribes. Mail scanners and
  // link previews follow GET links, and must never unsubscribe anyone. Not signed in: only the address is shown.
  root.get('/u/:token', linkLimit, async (req, res) => {
    // Express answers HEAD with the GET route: a link checker's probe gets the headers and nothing is looked up.
    if (req.method === 'HEAD') return res.set('Cache-Control', 'no-store').type('html').end();
    const out = await automation().CheckUnsubscribeLink(token(req), ctxOf(req, res));
    res.set('Cache-Control', 'no-store').type('html').send(confirmPage(out.email));
  });
  // The page's button, and RFC 8058 one-click (the mail client POSTs "List-Unsubscribe=One-Click" to the
  // List-Unsubscribe address). A browser gets a page, a mail client JSON.
  root.post('/u/:token', linkLimit, async (req, res) => {
    const out = await automation().UnsubscribeEmail(token(req), ctxOf(req, res));
    res.set('Cache-Control', 'no-store');
    if (req.accepts(['json', 'html']) === 'html')
      return res.type('html').send(page('You are unsubscribed', `${out.email} will not receive these emails any more.`));
    res.json({ unsubscribed: true });
  });
  root.get('/o/:file', linkLimit, async (req, res) => {
    const m = /^([A-Za-z0-9_-]{1,200})\.gif$/.exec(String(req.params.file));
    if (!m) return sendError(res, 404, 'not_found', 'Link not found');
    if (req.method === 'HEAD') return res.set('Cache-Control', 'no-store, private').type('image/gif').end();
    await automation().RecordEmailOpen({ token: m[1] }, ctxOf(req, res));
    res.set('Cache-Control', 'no-store, private').type('image/gif').send(PIXEL);
  });

  return { internal: r, root };
}
