import { composeEmail, isHtmlTemplate, textOfHtml } from './compose';

const who = { name: 'Lan <b>&', phone: '', email: 'lan@example.test', status: 'customer', tags: [], chatnetUid: '' };
const links = { unsubscribeUrl: 'https://crm.test/u/abc', pixelUrl: 'https://crm.test/o/abc.gif' };

describe('composeEmail', () => {
  it('an HTML template gets HTML-escaped values, the footer link, the pixel and a derived text part', () => {
    const m = composeEmail(
      { subject: 'Hi {{name}}\r\nBcc: x@evil.test', content: '<p>Hello <b>{{name}}</b>, code {{code}}</p>', variables: { code: 'A&B' } },
      who,
      links,
    );
    expect(m.subject).toBe('Hi Lan <b>& Bcc: x@evil.test');
    expect(m.html).toContain('<p>Hello <b>Lan &#60;b&#62;&#38;</b>, code A&#38;B</p>');
    expect(m.html).toContain('<a href="https://crm.test/u/abc">Unsubscribe</a>');
    expect(m.html).toContain('<img src="https://crm.test/o/abc.gif" width="1" height="1"');
    expect(m.text).toBe('Hello Lan <b>&, code A&B\n\n--\nUnsubscribe: https://crm.test/u/abc\n');
    expect(m.headers).toEqual({ 'List-Unsubscribe': '<https://crm.test/u/abc>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });
  });

  it('a text template stays text; its HTML part is the escaped text with line breaks', () => {
    const m = composeEmail({ subject: 'Sale', content: 'Dear {{name}},\nsee you', variables: {} }, who, links);
    expect(m.text.startsWith('Dear Lan <b>&,\nsee you')).toBe(true);
    expect(m.html).toContain('Dear Lan &#60;b&#62;&#38;,<br>see you');
    expect(isHtmlTemplate('a < b and c > d')).toBe(false);
    expect(textOfHtml('<p>a&amp;b</p><br/>c')).toBe('a&b\n\nc');
  });
});
