import { describe, expect, it } from 'vitest';
import { call, type TestServer, withServer } from '../support/harness.js';

let server: TestServer;
let key: string;
const next = (res: Response) => /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1];

withServer(async (started, generous) => {
  server = started;
  key = generous;
  for (let i = 1; i <= 250; i++) {
    await server.sql(
      'INSERT INTO pets (name, category_id, status) VALUES (?, 1, ?)',
      `Pet ${i}`,
      i % 5 === 0 ? 'sold' : 'available',
    );
  }
});

async function walk(first: string) {
  const ids: number[] = [];
  const links: string[] = [];
  let url: string | undefined = first;
  while (url) {
    const res = await call(`${server.url}${url}`, key);
    expect(res.status).toBe(200);
    ids.push(...((await res.json()) as { id: number }[]).map((p) => p.id));
    url = next(res);
    if (url) links.push(url);
  }
  return { ids, links };
}

describe('GET /pets pagination', () => {
  it('when following rel="next", then every pet is seen once, in id order, past the first 100', async () => {
    const { ids, links } = await walk('/v1/pets?limit=100');
    expect(ids).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
    expect(links).toHaveLength(2);
    for (const link of links) expect(link).toMatch(/^\/v1\/pets\?limit=100&cursor=[A-Za-z0-9_.-]+$/);
  });

  it('when filtering by status, then the links keep the filter', async () => {
    const { ids, links } = await walk('/v1/pets?status=sold&limit=20');
    expect(ids).toEqual(Array.from({ length: 50 }, (_, i) => (i + 1) * 5));
    expect(links.every((l) => l.includes('status=sold') && l.includes('limit=20'))).toBe(true);
  });

  it('when the page is the last, then there is no next link', async () => {
    const res = await call(`${server.url}/v1/pets?limit=100&status=sold`, key);
    expect(res.headers.get('link')).toBeNull();
  });

  it.each([
    ['altered', (c: string) => `${c.slice(0, 2)}${c[2] === 'A' ? 'B' : 'A'}${c.slice(3)}`],
    ['forged', () => `${Buffer.from('[0,null]').toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAA`],
    ['garbage', () => 'hello'],
  ])('when the cursor is %s, then 400', async (_, tamper) => {
    const cursor = new URL(
      next(await call(`${server.url}/v1/pets?limit=10`, key)) as string,
      server.url,
    ).searchParams.get('cursor') as string;
    const res = await call(`${server.url}/v1/pets?limit=10&cursor=${tamper(cursor)}`, key);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: 'invalid_request',
      message: expect.stringMatching(/query\.cursor/),
      status: 400,
    });
  });

  it('when a cursor is sent with another status filter, then 400', async () => {
    const link = next(await call(`${server.url}/v1/pets?limit=10&status=available`, key)) as string;
    const res = await call(`${server.url}${link.replace('status=available', 'status=sold')}`, key);
    expect(res.status).toBe(400);
  });
});
