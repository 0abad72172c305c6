import { issueOf } from './test-support/issue-of';
import { isHttpUrl, networkHttpUrl, optionalHttpUrl } from './index';

const BAD = [
  'javascript:alert(1)',
  'JAVASCRIPT:alert(1)',
  'data:text/html,<b>x</b>',
  'file:///etc/passwd',
  'ftp://files.example/a.png',
  'https://',
  '//cdn.example/a.png',
  'not a url',
];

describe('URLs a service stores (avatars): http(s) only', () => {
  it('isHttpUrl takes an absolute http(s) URL with a host, of at most 2,000 characters', () => {
    expect(isHttpUrl('https://cdn.example/a.png')).toBe(true);
    expect(isHttpUrl('http://cdn.example:8080/a.png?x=1')).toBe(true);
    for (const bad of BAD) expect([bad, isHttpUrl(bad)]).toEqual([bad, false]);
    const at = (n: number) => `https://cdn.example/${'a'.repeat(n - 'https://cdn.example/'.length)}`;
    expect([isHttpUrl(at(2000)), isHttpUrl(at(2001))]).toEqual([true, false]);
  });

  it('optionalHttpUrl (user input) trims, keeps empty, and refuses anything else with 400 naming the field', () => {
    expect(optionalHttpUrl(undefined, 'avatar')).toBe('');
    expect(optionalHttpUrl('  ', 'avatar')).toBe('');
    expect(optionalHttpUrl(' https://cdn.example/a.png ', 'avatar')).toBe('https://cdn.example/a.png');
    for (const bad of BAD)
      expect(issueOf(() => optionalHttpUrl(bad, 'avatar'))).toEqual({ field: 'avatar', message: 'must be an http or https URL (or empty)' });
    expect(issueOf(() => optionalHttpUrl(`https://cdn.example/${'a'.repeat(2000)}`, 'avatar'))).toEqual({
      field: 'avatar',
      message: 'must be at most 2000 characters',
    });
  });

  it('networkHttpUrl (network data) drops anything but http(s) and says so, never throws', () => {
    expect(networkHttpUrl('https://cdn.example/a.png')).toEqual({ url: 'https://cdn.example/a.png', dropped: false });
    expect(networkHttpUrl(undefined)).toEqual({ url: '', dropped: false });
    for (const bad of [...BAD, 'https://cdn.example/\u0000.png', `https://cdn.example/${'a'.repeat(2000)}`])
      expect(networkHttpUrl(bad)).toEqual({ url: '', dropped: true });
  });
});
