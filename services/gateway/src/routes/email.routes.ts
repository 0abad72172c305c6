import { page as pageOf } from './common.schemas';
import { responseContract } from '../http/response-contract';
import { routeArea } from '../http/route-area';
import type { RouteDeps, ServiceRoutes } from './deps';
import { channelOut, suppressionOut } from './email.out';
import { HttpError, sendError } from '../http/errors';
import { ChannelBody, EmailChannel, Suppression, TestBody, TestDelivered, Unsubscribed } from './email.schemas';

/**
 * Email campaigns' settings and their public links (all owned by the automation service): the org's SMTP
 * channel (`/settings/email`, the password write-only), its suppression list, and, without sign-in, the
 * unsubscribe link (`/u/<token>`) and the open pixel (`/o/<token>.gif`) every campaign email carries. The
 * public links are rate-limited per IP like the other routes without a credential; their token is checked by
 * automation (an HMAC), and a token that does not verify is a 404.
 */

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

/** The org's SMTP channel and suppression list, internal API (bearer): served and documented from these declarations. */
export const emailArea = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Email campaigns' });
const automation = (deps: RouteDeps) => deps.clients.automation;

emailArea.route('GET /settings/email', {
  summary: 'The organization’s email channel (SMTP); the password is never shown',
  response: EmailChannel,
  handler: async ({ ctx, deps }) => channelOut(await automation(deps).GetEmailChannel({}, ctx)),
});
emailArea.route('PUT /settings/email', {
  summary: 'Set the organization’s SMTP server (admins and owners); an omitted password keeps the stored one',
  body: ChannelBody,
  response: EmailChannel,
  handler: async ({ body, ctx, deps }) => channelOut(await automation(deps).UpdateEmailChannel(body, ctx)),
});
emailArea.route('DELETE /settings/email', {
  summary: 'Remove the organization’s own SMTP server',
  status: 204,
  response: null,
  errors: [404],
  handler: async ({ ctx, deps }) => {
    await automation(deps).DeleteEmailChannel({}, ctx);
  },
});
emailArea.route('POST /settings/email/test', {
  summary: 'Send a test email through the channel',
  description: '502 carries the mail server’s refusal; 422 when no channel is configured.',
  body: TestBody,
  response: TestDelivered,
  errors: [422, 502],
  handler: async ({ body, ctx, deps }) => {
    const out = await automation(deps).TestEmailChannel(body, ctx);
    // The mail server's refusal is the upstream's answer, so a 502 that carries it (never a credential).
    if (!out.delivered) throw new HttpError(502, 'smtp_error', out.error || 'The mail server did not accept the message');
    return { delivered: true as const };
  },
});
emailArea.route('GET /email-suppressions', {
  summary: 'Addresses that will not be emailed (they unsubscribed)',
  paging: { limit: 50, max: 100 },
  response: pageOf(Suppression),
  handler: async ({ page, ctx, deps }) => {
    const out = await automation(deps).ListEmailSuppressions(page, ctx);
    return { data: out.data.map(suppressionOut), pagination: out.pagination! };
  },
});
emailArea.route('DELETE /email-suppressions/:email', {
  summary: 'Email an address again (admins and owners)',
  status: 204,
  response: null,
  errors: [400],
  handler: async ({ param, ctx, deps }) => {
    await automation(deps).DeleteEmailSuppression({ email: param('email') }, ctx);
  },
});

/**
 * The links every campaign email carries, without sign-in: each behind its own per-IP rate limit (linkLimit), answering
 * HEAD without a lookup (express answers HEAD with the GET route: a link checker's probe gets the headers and nothing
 * is looked up), and a page, a pixel or, by content negotiation, JSON.
 */
export const emailLinkArea = routeArea({ prefix: '', auth: 'none', tag: 'Email links', middleware: (deps) => [deps.linkLimit] });
const token = (param: (name: string) => string) => ({ token: param('token') });

// The link in the email body opens a page that asks; only its button (a POST) unsubscribes. Mail scanners and link
// previews follow GET links, and must never unsubscribe anyone. Not signed in: only the address is shown.
emailLinkArea.route('GET /u/:token', {
  summary: 'The unsubscribe link of a campaign email: a page that asks to confirm (changes nothing: link scanners follow GET links)',
  response: 'html',
  errors: [404, 429],
  handler: async ({ req, res, param, ctx, deps }) => {
    if (req.method === 'HEAD') return void res.set('Cache-Control', 'no-store').type('html').end();
    const out = await automation(deps).CheckUnsubscribeLink(token(param), ctx);
    res.set('Cache-Control', 'no-store').type('html').send(confirmPage(out.email));
  },
});
// The page's button, and RFC 8058 one-click (the mail client POSTs "List-Unsubscribe=One-Click" to the
// List-Unsubscribe address). A browser gets a page, a mail client JSON.
emailLinkArea.route('POST /u/:token', {
  summary: "Unsubscribe: the confirmation page's button (answered with a page) or one-click (RFC 8058 List-Unsubscribe-Post)",
  response: Unsubscribed,
  errors: [404, 429],
  handler: async ({ req, res, param, ctx, deps, sent }) => {
    const out = await automation(deps).UnsubscribeEmail(token(param), ctx);
    res.set('Cache-Control', 'no-store');
    if (req.accepts(['json', 'html']) === 'html')
      return sent(res.type('html').send(page('You are unsubscribed', `${out.email} will not receive these emails any more.`)));
    return { unsubscribed: true as const };
  },
});
emailLinkArea.route('GET /o/:file', {
  summary: 'The open pixel of a campaign email (`<token>.gif`): the first load marks the email opened',
  response: 'gif',
  errors: [404, 429],
  handler: async ({ req, res, param, ctx, deps }) => {
    const m = /^([A-Za-z0-9_-]{1,200})\.gif$/.exec(param('file'));
    if (!m) return sendError(res, 404, 'not_found', 'Link not found');
    if (req.method === 'HEAD') return void res.set('Cache-Control', 'no-store, private').type('image/gif').end();
    await automation(deps).RecordEmailOpen({ token: m[1] }, ctx);
    res.set('Cache-Control', 'no-store, private').type('image/gif').send(PIXEL);
  },
});

export function emailRoutes(deps: RouteDeps): ServiceRoutes {
  const contract = responseContract(deps.config);
  return { internal: emailArea.router(deps, contract), root: emailLinkArea.router(deps, contract) };
}
