import vm from 'node:vm';
import path from 'node:path';
import { client, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';

// After sign-in the login page follows `?next=` only to a path on this site. The URL is anyone's to craft,
// so every spelling that a browser reads as another site, or as script, falls back to the default page.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { safeNextPath } = require(path.resolve(__dirname, '../../services/gateway/public/redirect.js')) as {
  safeNextPath(next: string | null, origin: string, fallback: string): string;
};

const ORIGIN = 'https://crm.example.com';
const HOME = '/settings/dev/api';
/** What the page does: read `next` from its own query string (decoded once), then decide. */
const target = (query: string) => safeNextPath(new URLSearchParams(query).get('next'), ORIGIN, HOME);

const OFF_SITE = [
  'next=//evil.com',
  'next=/\\evil.com',
  'next=/\\/evil.com',
  'next=\\\\evil.com',
  'next=https://evil.com',
  'next=http:evil.com',
  'next=javascript:alert(document.cookie)',
  'next=JaVaScRiPt:alert(1)',
  'next=data:text/html,<script>alert(1)</script>',
  'next=%2F%2Fevil.com',
  'next=%2F%5Cevil.com',
  'next=%2F%5C%2Fevil.com',
  'next=%252F%252Fevil.com',
  'next=https%3A%2F%2Fevil.com',
  'next=javascript%3Aalert(1)',
  'next=/%09/evil.com',
  'next=/%0A/evil.com',
  'next=%20//evil.com',
  'next=',
  '',
];

describe('safeNextPath: where the login page goes after sign-in', () => {
  it.each(OFF_SITE)('%j falls back to the default page', (query) => {
    expect(target(query)).toBe(HOME);
  });

  it.each([
    ['next=/settings/ai', '/settings/ai'],
    ['next=%2Fsettings%2Fai', '/settings/ai'],
    ['next=/settings/dev/api?tab=webhooks#events', '/settings/dev/api?tab=webhooks#events'],
    ['next=/', '/'],
    // Percent-encoded slashes stay in the path of our own site; the browser does not decode them into a host.
    ['next=/%252F%252Fevil.com', '/%2F%2Fevil.com'],
  ])('%j stays on the site: %s', (query, expected) => {
    expect(target(query)).toBe(expected);
  });
});

// The page as served: login.html's own scripts, fetched from the gateway and run in a bare window with a
// real sign-in against the stack, so the check covers the wiring (redirect.js loaded and used by login.js).
describe('the served /login page', () => {
  let stack: Stack;
  let org: Awaited<ReturnType<typeof newOrg>>;
  beforeAll(async () => {
    stack = await startStack();
    org = await newOrg(client(stack.url), 'Redirect Co');
  });
  afterAll(() => stack?.stop());

  async function signInWith(query: string): Promise<string> {
    const html = await (await fetch(`${stack.url}/login${query}`)).text();
    const scripts = [...html.matchAll(/<script src="([^"]+)"><\/script>/g)].map((m) => m[1]);
    let submit: ((ev: { preventDefault(): void }) => Promise<void>) | undefined;
    const form = {
      email: { value: org.email },
      password: { value: 'correct horse battery', focus() {} },
      addEventListener: (_type: string, fn: typeof submit) => (submit = fn),
    };
    const storage = new Map<string, string>();
    const page: Record<string, unknown> = {
      document: { getElementById: (id: string) => (id === 'login-form' ? form : { hidden: true, textContent: '' }) },
      location: { origin: stack.url, pathname: '/login', search: query, href: `${stack.url}/login${query}` },
      sessionStorage: {
        getItem: (k: string) => storage.get(k) ?? null,
        setItem: (k: string, v: string) => storage.set(k, v),
        removeItem: (k: string) => storage.delete(k),
      },
      fetch: (p: string, init: RequestInit) => fetch(stack.url + p, init),
      URL,
      URLSearchParams,
    };
    page.window = page;
    const context = vm.createContext(page);
    for (const src of scripts) vm.runInContext(await (await fetch(stack.url + src)).text(), context, { filename: src });
    await submit!({ preventDefault() {} });
    expect(storage.get('crm.token')).toBeTruthy();
    return (page.location as { href: string }).href;
  }

  it('signs in and follows next= to a page of the site', async () => {
    expect(await signInWith('?next=%2Fsettings%2Fai')).toBe('/settings/ai');
  });

  it.each(['?next=/\\evil.com', '?next=//evil.com', '?next=/\\/evil.com', '?next=https%3A%2F%2Fevil.com', '?next=javascript:alert(1)'])(
    'signs in and ignores %s: the default page instead',
    async (query) => {
      expect(await signInWith(query)).toBe(HOME);
    },
  );
});
