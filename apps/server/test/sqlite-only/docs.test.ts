// The API reference at /docs, loaded in headless Chromium (Debian's package, driven by playwright-core).
import { deprecatedOperations } from '@animal-store/spec';
import { toolFor } from '@animal-store/test-support';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, startServer, type TestServer } from '../support/harness.js';

const chromium = toolFor('the docs page in a real browser', 'chromium');

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  if (!chromium) return;
  server = await startServer({ adminTokens: ['d'.repeat(40)] });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  server?.expectNoContractViolations();
  await server?.close();
});

/**
 * Lets the page load only from the server (and data:/blob:); answers what it tried to reach outside, and
 * what its own Content-Security-Policy blocked (which never reaches the router: Redoc's remote logo and its
 * telemetry did, before the build replaced the one and turned the other off).
 */
async function blockOutside(page: Page): Promise<string[]> {
  const outside: string[] = [];
  await page.route('**/*', (route) => {
    const { hostname, protocol } = new URL(route.request().url());
    if (hostname === '127.0.0.1' || protocol === 'data:' || protocol === 'blob:') return route.continue();
    outside.push(route.request().url());
    return route.abort();
  });
  page.on('console', (message) => {
    if (message.type() === 'error' && message.text().includes('Content Security Policy'))
      outside.push(message.text());
  });
  return outside;
}

/** Waits until the page has had time to send what it sends after load (Redoc's telemetry did within 3 s). */
const settled = async (page: Page) => {
  await page.waitForLoadState('networkidle');
  await page.waitForTimeout(5_000);
};

describe.runIf(chromium)('GET /docs', () => {
  it('renders the three operations and the deprecation notice, without reaching outside', async () => {
    const page = await browser.newPage();
    const outside = await blockOutside(page);
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
    // 1.1.0: the successor is named, and createPet documents its Idempotency-Key.
    expect(text).toContain('GET /pets?id=<petId>');
    await page.getByText('Add an animal').first().click();
    await expect.poll(visibleText, { timeout: 15_000 }).toContain('Idempotency-Key');
    await settled(page);
    expect(outside).toEqual([]);
    await page.close();
  });

  it("the admin listener's /docs renders the admin API's operations, without reaching outside", async () => {
    const page = await browser.newPage();
    const outside = await blockOutside(page);
    const response = await page.goto(`${server.adminUrl}/docs`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    // biome-ignore lint/performance/useDomNodeTextContent: rendered text is the point here
    const visibleText = () => page.locator('body').innerText();
    await page.getByText('keys', { exact: true }).first().click();
    for (const text of ['Create a key', 'Change a key', "Get a key's usage", 'Revoke a key']) {
      await expect.poll(visibleText, { timeout: 15_000 }).toContain(text);
    }
    await settled(page);
    expect(outside).toEqual([]);
    // Redoc's attribution, drawn here: the logo is an image of the page itself, and it loaded.
    const logo = page.getByAltText('redocly logo');
    await expect.poll(() => logo.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(0);
    await page.close();
  });

  it('is served without a key, as HTML', async () => {
    const res = await fetch(`${server.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
  });
});
