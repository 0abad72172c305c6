import { escapeHtml } from '@crm/mail';
import { RecipientFields, renderFor, Scalar } from '../campaign-text';

/**
 * One campaign email: the campaign's subject and template rendered for the recipient, with an unsubscribe
 * link (in the body and as List-Unsubscribe, one-click per RFC 8058) and a 1×1 open pixel. A template that
 * contains HTML tags is an HTML body (values are HTML-escaped into it, a text part is derived from it);
 * otherwise it is text, and the HTML part is that text escaped, line breaks kept.
 */
export interface ComposedEmail {
  subject: string;
  text: string;
  html: string;
  headers: Record<string, string>;
}

export interface EmailLinks {
  unsubscribeUrl: string;
  pixelUrl: string;
}

const HTML_TAG = /<\/?[a-z][a-z0-9]*(?:\s[^<>]*)?\/?>/i;

export function isHtmlTemplate(content: string): boolean {
  return HTML_TAG.test(content);
}

/** A header value on one line: line breaks in a contact's name cannot start a header of their own. */
function oneLine(s: string): string {
  return s
    .replace(/[\r\n\t]+/g, ' ')
    .replace(/\s{2,}/g, ' ')
    .trim();
}

/** The text part of an HTML body: tags dropped, block ends as line breaks, the common entities decoded. */
export function textOfHtml(html: string): string {
  return html
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|h[1-6]|li|tr)>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&(#\d+|lt|gt|amp|quot|nbsp);/g, (m, e: string) =>
      e.startsWith('#')
        ? String.fromCharCode(Number(e.slice(1)))
        : (({ lt: '<', gt: '>', amp: '&', quot: '"', nbsp: ' ' } as Record<string, string>)[e] ?? m),
    )
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export function composeEmail(
  campaign: { subject: string; content: string; variables: Record<string, Scalar> },
  who: RecipientFields,
  links: EmailLinks,
): ComposedEmail {
  const subject = oneLine(renderFor(campaign.subject, who, campaign.variables)).slice(0, 900);
  const unsub = escapeHtml(links.unsubscribeUrl);
  const footer =
    `<p style="margin-top:24px;font-size:12px;color:#777">You receive this email because you are a customer of ours. ` +
    `<a href="${unsub}">Unsubscribe</a></p><img src="${escapeHtml(links.pixelUrl)}" width="1" height="1" alt="" style="display:block;border:0">`;
  let html: string;
  let text: string;
  if (isHtmlTemplate(campaign.content)) {
    const body = renderFor(campaign.content, who, campaign.variables, escapeHtml).trim();
    html = /<\/body>/i.test(body) ? body.replace(/<\/body>/i, `${footer}</body>`) : `${body}\n${footer}`;
    text = textOfHtml(body);
  } else {
    text = renderFor(campaign.content, who, campaign.variables).trim();
    html = `<div style="white-space:normal">${escapeHtml(text).replace(/\r?\n/g, '<br>')}</div>\n${footer}`;
  }
  text = `${text}\n\n--\nUnsubscribe: ${links.unsubscribeUrl}\n`;
  return {
    subject,
    text,
    html,
    headers: { 'List-Unsubscribe': `<${links.unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  };
}
