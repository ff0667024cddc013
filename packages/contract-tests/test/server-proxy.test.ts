// The real server behind `prism proxy --errors`: Prism checks every response of the server against the
// contract. A scenario drives every operation and every status the server can be made to answer here
// (410 needs a clock past the sunset: see apps/server/test/sqlite-only/process.test.ts; 500 cannot be provoked).
// Malformed JSON is left out: Prism 5.14.2 never answers a request whose JSON body it cannot parse, even
// with request validation off; apps/server/test/every-engine/pets.test.ts covers it against the server directly.

import { enterprise } from '@animal-store/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, prismProxy, type Running, server, tempDatabase } from './processes.js';

let upstream: Running;
let proxy: Running;
let key: string;
let limitedKey: string;
const databasePath = tempDatabase();

beforeAll(async () => {
  key = await createKey(databasePath, ...enterprise(1000, 10_000));
  limitedKey = await createKey(databasePath, ...enterprise(1, 100));
  upstream = await server(databasePath, { RATE_LIMIT_ANONYMOUS_PER_MINUTE: '1000' });
  proxy = await prismProxy(`${upstream.url}/v1`);
});
afterAll(async () => {
  await proxy?.stop();
  await upstream?.stop();
});

// Prism answers a request without any bearer token itself (401), so the 401 steps send an unknown key.
const unknownKey = 'as_000000000000_unknown';
type Step = [name: string, path: string, init: RequestInit & { key?: string }, status: number];
const body = (value: unknown) => ({
  method: 'POST',
  body: JSON.stringify(value),
  headers: { 'content-type': 'application/json' },
});

const scenario = (): Step[] => [
  ['createPet 201', '/pets', body({ name: 'Rex', categoryId: 1 }), 201],
  ...Array.from(
    { length: 21 },
    (_, i): Step => [
      `createPet 201 #${i}`,
      '/pets',
      body({ name: `Pet ${i}`, categoryId: 2, status: 'sold' }),
      201,
    ],
  ),
  ['listPets 200 with a next link', '/pets?limit=20', {}, 200],
  ['listPets 200 filtered', '/pets?status=sold&limit=100', {}, 200],
  ['listPets 400 (limit)', '/pets?limit=1000', {}, 400],
  ['listPets 400 (cursor)', '/pets?cursor=forged.cursor', {}, 400],
  ['listPets 401', '/pets', { key: unknownKey }, 401],
  ['createPet 400 (missing field)', '/pets', body({ name: 'Rex' }), 400],
  ['createPet 413', '/pets', body({ name: 'x'.repeat(20_000), categoryId: 1 }), 413],
  [
    'createPet 415',
    '/pets',
    { method: 'POST', body: 'name=Rex', headers: { 'content-type': 'text/plain' } },
    415,
  ],
  ['createPet 401', '/pets', { ...body({ name: 'Rex', categoryId: 1 }), key: unknownKey }, 401],
  ['getPet 200', '/pets/1', {}, 200],
  ['getPet 404', '/pets/9007199254740993', {}, 404],
  ['getPet 400', '/pets/abc', {}, 400],
  ['getPet 401', '/pets/1', { key: unknownKey }, 401],
  ['listPets 200 (limited key)', '/pets', { key: limitedKey }, 200],
  ['listPets 429', '/pets', { key: limitedKey }, 429],
  ['createPet 429', '/pets', { ...body({ name: 'Rex', categoryId: 1 }), key: limitedKey }, 429],
  ['getPet 429', '/pets/1', { key: limitedKey }, 429],
];

describe('the server behind prism proxy', () => {
  it('answers the whole scenario within the contract', async () => {
    const results: { step: string; status: number; violations: string | null }[] = [];
    for (const [step, path, init] of scenario()) {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${init.key ?? key}`);
      const res = await fetch(`${proxy.url}${path}`, { ...init, headers });
      await res.arrayBuffer();
      results.push({ step, status: res.status, violations: res.headers.get('sl-violations') });
    }
    expect(results).toEqual(scenario().map(([step, , , status]) => ({ step, status, violations: null })));
    expect(proxy.output()).not.toMatch(/Violation:|error\s+Request terminated/i);
  });
});

describe('prism proxy as a drift detector', () => {
  it('when an upstream answers outside the contract, then the violation is reported', async () => {
    // A fixture upstream that has drifted: its Pet lacks `name`, and it sends no rate-limit headers.
    const { createServer } = await import('node:http');
    const drifted = createServer((_req, res) => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify([{ id: 1, categoryId: 1 }]));
    });
    await new Promise<void>((resolve) => drifted.listen(0, '127.0.0.1', resolve));
    const checker = await prismProxy(`http://127.0.0.1:${(drifted.address() as { port: number }).port}/v1`);
    try {
      const res = await fetch(`${checker.url}/pets`, { headers: { authorization: `Bearer ${key}` } });
      await res.arrayBuffer();
      expect(res.status).toBe(500);
      expect(res.headers.get('sl-violations') ?? checker.output()).toMatch(/name/);
    } finally {
      await checker.stop();
      drifted.close();
    }
  });
});
