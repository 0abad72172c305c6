import { createHmac } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, Browser, Page } from 'playwright-core';
import { eventually } from '@crm/testing';
import { client, newOrg } from '../support/http';
import { startStack, Stack } from '../support/stack';

// Browser globals, used only inside page.evaluate callbacks (which run in chromium, not Node).
declare const document: any;
declare const navigator: any;
type HTMLInputElement = { labels?: { length: number }; getAttribute(name: string): string | null; tagName: string; textContent: string | null };

// The API & webhook settings page in a real browser (Debian's chromium driven by playwright-core).
const ARTIFACTS = path.resolve(__dirname, '../../test-artifacts/settings-page');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('settings page /settings/dev/api in a browser', () => {
  let stack: Stack;
  let browser: Browser;
  let receiver: http.Server;
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  let org: Awaited<ReturnType<typeof newOrg>>;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    stack = await startStack({ services: ['webhooks', 'ai'], serviceEnv: { webhooks: { WEBHOOK_ALLOWED_PRIVATE_ADDRESSES: '127.0.0.1' } } });
    org = await newOrg(client(stack.url), 'Browser Co');
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-quic',
        '--no-first-run',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    receiver?.close();
    await stack?.stop();
  });

  async function signIn(page: Page) {
    await page.goto(`${stack.url}/settings/dev/api`);
    await page.waitForURL(/\/login/);
    await page.getByLabel('Email').fill(org.email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/settings\/dev\/api/);
  }

  it('signs in, generates and copies a key that works on the public API, saves a webhook and test-sends a signed event', async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.url });
    const page = await context.newPage();
    page.on('dialog', (d) => void d.accept());
    await signIn(page);
    await page.screenshot({ path: path.join(ARTIFACTS, '1-signed-in.png'), fullPage: true });

    // API key: generate, shown in full once, copy.
    await page.getByRole('button', { name: 'Generate new key' }).click();
    await page.getByText('Key generated.').waitFor();
    const shown = await page.getByLabel('Current key').inputValue();
    expect(shown).toMatch(/^crm_live_[0-9A-Za-z]{32}$/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(shown);
    const who = await client(stack.url).withKey(copied).get('/api/public/whoami');
    expect(who.status).toBe(200);
    expect(who.body.organizationId).toBe(org.user.orgId);

    // After a reload only the mask is shown.
    await page.reload();
    await eventually(async () => (await page.getByLabel('Current key').inputValue()) === `crm_live_••••${shown.slice(-4)}`);

    // Webhook: save with a generated secret, then Test Webhook reaches the local receiver, signed.
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    await page.getByLabel('URL').fill(url);
    await page.getByRole('button', { name: 'Save' }).click();
    const status = page.locator('#webhook-status');
    await eventually(async () => /Saved\. Signing secret/.test((await status.textContent()) ?? ''));
    const secret = /(whsec_\S+)/.exec((await status.textContent())!)![1];
    await page.getByRole('button', { name: 'Test Webhook' }).click();
    await eventually(async () => /Test event delivered: HTTP 200/.test((await status.textContent()) ?? ''), 15_000);
    await page.screenshot({ path: path.join(ARTIFACTS, '2-webhook-tested.png'), fullPage: true });

    const trial = received.find((r) => JSON.parse(r.body).type === 'webhook.test');
    expect(trial).toBeDefined();
    const { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': sig } = trial!.headers as Record<string, string>;
    const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
      .update(`${id}.${ts}.${trial!.body}`)
      .digest('base64');
    expect(sig.split(' ')).toContain(`v1,${expected}`);

    // The AI summary and the documentation blocks are filled from the API.
    await eventually(async () => (await page.locator('#ai-provider').textContent()) !== '…');
    expect(await page.locator('#docs-endpoints li').count()).toBeGreaterThanOrEqual(9);
    expect(await page.locator('#docs-events li').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('message.received')]));
    await context.close();
  }, 90_000);

  it('is usable on a phone-sized screen and by keyboard', async () => {
    const context = await browser.newContext({ viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    await signIn(page);
    // Nothing overflows horizontally.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    // Every form control has an accessible name.
    const unnamed = await page.evaluate(
      () =>
        [...document.querySelectorAll('input, select, button')].filter((el) => {
          const e = el as HTMLInputElement;
          return !(e.labels?.length || e.getAttribute('aria-label') || (e.tagName === 'BUTTON' && e.textContent?.trim()));
        }).length,
    );
    expect(unnamed).toBe(0);
    // The generate button is reachable with the keyboard.
    let reached = false;
    for (let i = 0; i < 15 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement?.id === 'generate-key');
    }
    expect(reached).toBe(true);
    await page.screenshot({ path: path.join(ARTIFACTS, '3-phone.png'), fullPage: true });
    await context.close();
  }, 60_000);

  it('the AI assistant button leads to the configuration page, which saves provider, quota and keys', async () => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    const page = await context.newPage();
    await signIn(page);
    await page.getByRole('link', { name: 'Configure AI assistant' }).click();
    await page.waitForURL(/\/settings\/ai/);
    // Wait until the page has loaded the current configuration into the form.
    await eventually(async () => /^Status:/.test((await page.locator('#cfg-status').textContent()) ?? ''));
    await page.getByLabel('Daily quota (calls per day)').fill('42');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await eventually(async () => /Saved\. Status/.test((await page.locator('#cfg-status').textContent()) ?? ''));
    const cfg = await client(stack.url).as(org.token).get('/api/v1/ai/config');
    expect(cfg.body.dailyQuota).toBe(42);

    // A provider key is saved and afterwards shown only as a mask, never in the page.
    const secretKey = 'sk-test-abcdefghijklmnop1234';
    const openai = page.locator('form.provider', { hasText: 'OpenAI' });
    await openai.getByLabel('API key').fill(secretKey);
    await openai.getByRole('button', { name: 'Save key' }).click();
    await eventually(async () => /saved\./.test((await page.locator('#prov-status').textContent()) ?? ''));
    await eventually(async () => /key .*1234/.test((await page.locator('form.provider', { hasText: 'OpenAI' }).locator('h3').textContent()) ?? ''));
    expect(await page.content()).not.toContain(secretKey);
    await page.screenshot({ path: path.join(ARTIFACTS, '4-ai-config.png'), fullPage: true });
    await context.close();
  }, 60_000);
});
