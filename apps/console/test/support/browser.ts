// The console in headless Chromium (launchChromium, @animal-store/test-support): the built server with its
// admin listener (server.ts), a page signed in with its token, and what every console test checks on the way:
// no console error, no request outside the server, no serious accessibility violation (axe-core), no answer
// that breaks the admin contract (the server logs each), a screenshot of each view kept under
// apps/console/test-results/<backend>/, with the server's log.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAdminClient } from '@animal-store/client/admin';
import { launchChromium, toolFor } from '@animal-store/test-support';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { backend, type ConsoleServer, startConsoleServer } from './server.js';

export const chromium = toolFor('the console in a real browser', 'chromium');
/** The console's token, named `support` in ADMIN_TOKENS; `billingToken`, another system's, `billing`. */
export const adminToken = 'c'.repeat(40);
export const billingToken = 'd'.repeat(40);

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const shots = fileURLToPath(new URL(`../../test-results/${backend}/`, import.meta.url));

export type ConsolePage = Page & { problems: string[] };

/** A server with the admin API (more configuration in `env`) and a browser, for one suite; both stopped after it. */
export function consoleSuite(env: Record<string, string> = {}) {
  let server: ConsoleServer | undefined;
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    if (!chromium) return;
    server = await startConsoleServer([`support:${adminToken}`, `billing:${billingToken}`], env);
    browser = await launchChromium();
    mkdirSync(shots, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    // The server's log beside the screenshots, named by the suite's file: what a failure is read from.
    const log = server?.output() ?? '';
    writeFileSync(`${shots}${basename(expect.getState().testPath ?? 'suite')}.log`, log);
    expect(log).not.toMatch(/breaks the (admin )?contract/);
  });
  const running = () => {
    if (!server || !browser) throw new Error('the console suite did not start');
    return { server, browser };
  };
  const admin = (token = adminToken) =>
    createAdminClient({ baseUrl: `${running().server.adminUrl}/admin/v1`, token });
  return {
    get server() {
      return running().server;
    },
    /** The admin API's typed client, with the console's token unless another is given. */
    admin,
    /** A new free key made through the admin API: its record and its secret. */
    async freeKey() {
      return (await admin().createKey({ plan: 'free' })) as { key: { id: string }; secret: string };
    },
    /** A new tab (its own storage) that records console errors, failed loads and requests outside. */
    async newPage(viewport = { width: 1280, height: 900 }): Promise<ConsolePage> {
      const context = await running().browser.newContext({ viewport });
      contexts.push(context);
      const page = Object.assign(await context.newPage(), { problems: [] as string[] });
      await page.route('**/*', (route) => {
        const { hostname } = new URL(route.request().url());
        if (hostname === '127.0.0.1') return route.continue();
        page.problems.push(`outside: ${route.request().url()}`);
        return route.abort();
      });
      recordErrors(page, page.problems);
      return page;
    },
    /** Opens the console and signs in with the admin token; the keys' list is shown. */
    async signIn(page: Page, token = adminToken) {
      await page.goto(`${running().server.adminUrl}/console/`);
      await page.getByLabel('Admin token').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      if (token === adminToken) await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
    },
  };
}

/** Records into `problems` every console error of the page and every error its scripts throw. */
export function recordErrors(page: Page, problems: string[]) {
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page: ${error.message}`));
}

/** The page's serious and critical accessibility violations (axe-core, run in the page by the test driver). */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  // page.evaluate runs through the browser's debugging protocol: the page's policy, which refuses inline
  // scripts, does not apply to it (an injected <script> would be refused).
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: Violation[] }> } }).axe;
    type Violation = { id: string; impact: string | null; nodes: { target: string[] }[] };
    return (await axe.run()).violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.map((node) => node.target.join(' ')).join(', '),
    }));
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes}`);
}

/**
 * Checks the view as it is (accessibility, no problem so far but the failed answers the test provoked on
 * purpose, a status or a network error: Chromium logs each as a console error) and keeps its screenshot.
 */
export async function checkView(page: ConsolePage, name: string, provoked: (number | string)[] = []) {
  await page.screenshot({ path: `${shots}${name}.png`, fullPage: true });
  expect(await accessibilityProblems(page)).toEqual([]);
  const expected = (problem: string) =>
    provoked.some((what) => problem.includes(typeof what === 'number' ? `status of ${what} ` : what));
  expect(page.problems.filter((problem) => !expected(problem))).toEqual([]);
}
