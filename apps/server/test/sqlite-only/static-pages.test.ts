// The static pages (the API reference at /docs on both listeners, the console's files) under the headers
// of conditional and partial requests: a Range no part of the file satisfies answers 416 and a failed
// precondition 412, each in the Error shape; no header makes them answer 5xx or log an error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../support/harness.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ adminTokens: ['s'.repeat(40)] });
});
afterAll(async () => {
  server.expectNoContractViolations();
  await server.close();
});

const pages = () => [
  `${server.url}/docs`,
  `${server.adminUrl}/docs`,
  `${server.adminUrl}/console/`,
  `${server.adminUrl}/console/index.html`,
];
const get = (url: string, headers: Record<string, string>) => fetch(url, { headers });
const errorLines = () => server.logs.filter((line) => JSON.parse(line).level >= 50);

describe('static pages under Range and precondition headers', () => {
  it.each(['bytes=99999999-', 'bytes=-0', 'bytes=5-2', 'bytes=99999999-99999999'])(
    'Range: %s (nothing of the file, or backwards) answers 416 in the Error shape, with the size in Content-Range',
    async (range) => {
      for (const url of pages()) {
        const whole = await get(url, {});
        expect(whole.status, url).toBe(200);
        const size = (await whole.arrayBuffer()).byteLength;
        const res = await get(url, { Range: range });
        expect(res.status, `${url} ${range}`).toBe(416);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(res.headers.get('content-range')).toBe(`bytes */${size}`);
        expect(res.headers.get('etag')).toBeNull();
        expect(await res.json()).toEqual({
          code: 'range_not_satisfiable',
          message: 'The requested range is not satisfiable.',
          status: 416,
        });
      }
      expect(errorLines()).toEqual([]);
    },
  );

  it('a Range within the file is served as usual (206), one that is not a byte range ignored (200)', async () => {
    for (const url of pages()) {
      const part = await get(url, { Range: 'bytes=0-9' });
      expect(part.status, url).toBe(206);
      expect((await part.arrayBuffer()).byteLength).toBe(10);
      const malformed = await get(url, { Range: 'pages=1-2' });
      expect(malformed.status, url).toBe(200);
      await malformed.arrayBuffer();
    }
    expect(errorLines()).toEqual([]);
  });

  it.each<Record<string, string>>([
    { 'If-Match': '"not-this-one"' },
    { 'If-Unmodified-Since': 'Mon, 01 Jan 2001 00:00:00 GMT' },
  ])('%o answers 412 in the Error shape', async (headers) => {
    for (const url of pages()) {
      const res = await get(url, headers);
      expect(res.status, url).toBe(412);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({
        code: 'precondition_failed',
        message: 'A precondition of the request is not met.',
        status: 412,
      });
    }
    expect(errorLines()).toEqual([]);
  });
});

describe("the console's files: their policy and their caching", () => {
  it("the page: nothing allowed by default (default-src 'none'), never framed, and never cached unchecked", async () => {
    const page = await fetch(`${server.adminUrl}/console/`);
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy.split('; ')).toEqual(
      expect.arrayContaining(["default-src 'none'", "frame-ancestors 'none'"]),
    );
    expect(page.headers.get('x-frame-options')).toBe('DENY'); // browsers that read no frame-ancestors
    // A new release's page names its new assets: a page cached for a year would load the old ones.
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const path = /src="\/console\/(assets\/[^"]+\.js)"/.exec(await page.text())?.[1];
    expect(path).toBeDefined();
    const script = await fetch(`${server.adminUrl}/console/${path}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable'); // hashed names
  });
});
