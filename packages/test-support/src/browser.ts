// Headless Chromium for the suites that drive a page (the console, the docs page, CORS from a real origin).
import type { Browser } from 'playwright-core';
import { chromiumPath } from './tools.js';

/**
 * Headless Chromium (Debian's, found by chromiumPath) driven by playwright-core, with the flags this
 * machine's closed network needs (no background connections, no component updates), and any `more`.
 * playwright-core is imported here, on the first launch: importing it costs a quarter to half a second,
 * and every suite imports this package, where few drive a page.
 */
export async function launchChromium(more: string[] = []): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: chromiumPath(),
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      ...more,
    ],
  });
}

/** A request with `key` as its bearer token (none when undefined), JSON when it has a body. */
export function call(url: string, key: string | undefined, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  if (key !== undefined) headers.set('authorization', `Bearer ${key}`);
  if (init.body !== undefined && !headers.has('content-type'))
    headers.set('content-type', 'application/json');
  return fetch(url, { ...init, headers });
}
