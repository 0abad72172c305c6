import { z } from 'zod';
import { area } from '../registry';

/** The unsubscribe and open links every campaign email carries (automation; no credential). */
const links = area({ prefix: '', auth: 'none', tag: 'Email links' });
links.op('GET /u/:token', {
  summary: 'The unsubscribe link of a campaign email: a page that asks to confirm (changes nothing: link scanners follow GET links)',
  responses: { 200: 'html' },
  errors: [404, 429],
});
links.op('POST /u/:token', {
  summary: "Unsubscribe: the confirmation page's button (answered with a page) or one-click (RFC 8058 List-Unsubscribe-Post)",
  responses: { 200: z.object({ unsubscribed: z.literal(true) }) },
  errors: [404, 429],
});
links.op('GET /o/:file', {
  summary: 'The open pixel of a campaign email (`<token>.gif`): the first load marks the email opened',
  responses: { 200: 'gif' },
  errors: [404, 429],
});

export const emailLinkOps = links.ops;
