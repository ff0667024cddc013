// CORS from a real browser: a page on another origin calls the API with fetch in headless Chromium.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { toolFor } from '@animal-store/test-support';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, launchChromium, startServer, type TestServer } from '../support/harness.js';

const chromium = toolFor('CORS in a real browser', 'chromium');

let browser: Browser;
let pageServer: Server;
let pageOrigin: string;
/** What the page server answers: set by visit(). */
let html = '';
const servers: TestServer[] = [];

/** A page that calls `api` with the key, and reports what the browser let it see. */
const page = (api: string, key: string) => `<!doctype html><script>
  window.result = (async () => {
    try {
      const list = await fetch(${JSON.stringify(`${api}/v1/pets`)}, { headers: { Authorization: 'Bearer ${key}' } });
      const created = await fetch(${JSON.stringify(`${api}/v1/pets`)}, {
        method: 'POST',
        headers: { Authorization: 'Bearer ${key}', 'Content-Type': 'application/json', 'Idempotency-Key': 'from-a-page' },
        body: JSON.stringify({ name: 'Browsed', categoryId: 1 }),
      });
      return {
        status: list.status,
        remaining: list.headers.get('X-RateLimit-Remaining'),
        requestId: list.headers.get('X-Request-Id'),
        created: created.status,
        location: created.headers.get('Location'),
      };
    } catch (error) {
      return { blocked: String(error) };
    }
  })();
</script>`;

beforeAll(async () => {
  if (!chromium) return;
  browser = await launchChromium();
  pageServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  pageServer.listen(0, '127.0.0.1');
  await once(pageServer, 'listening');
  pageOrigin = `http://127.0.0.1:${(pageServer.address() as { port: number }).port}`;
});
afterAll(async () => {
  await browser?.close();
  pageServer?.close();
  for (const s of servers) {
    s.expectNoContractViolations();
    await s.close();
  }
});

async function visit(api: TestServer) {
  const key = await api.key({ perMinute: 100, perDay: 1000 });
  html = page(api.url, key);
  const tab = await browser.newPage();
  await tab.goto(pageOrigin);
  const result = await tab.evaluate(() => (window as unknown as { result: Promise<unknown> }).result);
  await tab.close();
  return result as Record<string, unknown>;
}

describe.runIf(chromium)('CORS_ORIGINS', () => {
  it('lets a page of an allowed origin call the API with its key and read the exposed headers', async () => {
    const api = await startServer({ corsOrigins: [pageOrigin] });
    servers.push(api);
    const result = await visit(api);
    expect(result).toEqual({
      status: 200,
      remaining: expect.stringMatching(/^\d+$/),
      requestId: expect.any(String),
      created: 201,
      location: expect.stringMatching(/^\/v1\/pets\?id=\d+$/),
    });
  });

  it('leaves a page of another origin refused by the browser', async () => {
    const api = await startServer({ corsOrigins: ['http://allowed.example'] });
    servers.push(api);
    expect(await visit(api)).toEqual({ blocked: expect.stringContaining('Failed to fetch') });
  });

  it('answers a preflight without a key, counted per address', async () => {
    const api = await startServer({ corsOrigins: ['*'], limits: { anonymousPerMinute: 2 } });
    servers.push(api);
    const preflight = () =>
      call(`${api.url}/v1/pets`, undefined, {
        method: 'OPTIONS',
        headers: {
          Origin: 'http://any.example',
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'authorization,content-type',
        },
      });
    const first = await preflight();
    expect(first.status).toBe(204);
    expect(first.headers.get('access-control-allow-origin')).toBe('*');
    expect(first.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
    expect((await preflight()).status).toBe(204);
    expect((await preflight()).status).toBe(429);
  });

  it('is off by default: a preflight needs a key like any request', async () => {
    const api = await startServer();
    servers.push(api);
    const res = await call(`${api.url}/v1/pets`, undefined, {
      method: 'OPTIONS',
      headers: { Origin: 'http://any.example', 'Access-Control-Request-Method': 'GET' },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});
