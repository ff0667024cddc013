// The API reference at /docs, loaded in headless Chromium (Debian's package, driven by playwright-core).
import { existsSync } from 'node:fs';
import { deprecatedOperations } from '@animal-store/spec';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './harness.js';

const executablePath = '/usr/bin/chromium';
let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(executablePath))
    throw new Error('chromium is missing: apt-get install chromium (.ci/run does)');
  server = await startServer();
  browser = await chromium.launch({
    executablePath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('GET /docs', () => {
  it('renders the three operations and the deprecation notice, without reaching outside', async () => {
    const page = await browser.newPage();
    const outside: string[] = [];
    await page.route('**/*', (route) => {
      const { hostname, protocol } = new URL(route.request().url());
      if (hostname === '127.0.0.1' || protocol === 'data:' || protocol === 'blob:') return route.continue();
      outside.push(route.request().url());
      return route.abort();
    });
    const response = await page.goto(`${server.url}/docs`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    const body = page.locator('body');
    // What a person sees: the rendered text, not the DOM's textContent.
    // biome-ignore lint/performance/useDomNodeTextContent: rendered text is the point here
    const visibleText = () => body.innerText();
    await page.getByText('pets', { exact: true }).first().click(); // the tag opens to its operations
    for (const text of ['List animals', 'Add an animal', 'Get an animal by id (deprecated)']) {
      await expect.poll(visibleText, { timeout: 15_000 }).toContain(text);
    }
    await page.getByText('Get an animal by id (deprecated)').first().click();
    await expect.poll(visibleText, { timeout: 15_000 }).toContain('Returns one animal by identifier.');
    const text = await visibleText();
    expect(text).toMatch(/\bDeprecated\b/);
    // The notice states the contract's removal date.
    const sunset = new Date(deprecatedOperations[0]?.sunset ?? '');
    const spelled = sunset.toLocaleDateString('en-GB', {
      day: 'numeric',
      month: 'long',
      year: 'numeric',
      timeZone: 'UTC',
    });
    expect(text).toContain(`removed on ${spelled}`);
    expect(outside).toEqual([]);
    await page.close();
  });

  it('is served without a key, as HTML', async () => {
    const res = await fetch(`${server.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
  });
});
