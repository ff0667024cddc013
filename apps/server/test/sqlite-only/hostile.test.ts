// Hostile input, generated from the contract with fast-check: every parameter and body field of every
// operation, wrong types, out of range, boundaries ±1, missing, extra, odd encodings, odd methods. Against
// the built server as a process, each answer must be: no 5xx, the Error shape on every failure, the
// rate-limit headers on every /v1 response; and the process alive at the end.
import { gzipSync } from 'node:zlib';
import { pageSize, requestBodyLimit } from '@animal-store/spec';
import { createKey, enterprise, tempDatabase } from '@animal-store/test-support';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateLimitHeaders, type ServerProcess, serverDist, startProcess } from '../support/harness.js';

let server: ServerProcess;
let key: string;
beforeAll(async () => {
  const path = tempDatabase();
  key = (await createKey(serverDist, { DATABASE_URL: path }, ...enterprise(1_000_000, 10_000_000))).key;
  server = await startProcess({ DATABASE_URL: path, NODE_ENV: 'production', LOG_LEVEL: 'warn' });
});
afterAll(() => server.stop());

const int64Max = '9223372036854775807';
const maxSafe = Number.MAX_SAFE_INTEGER;
/** Integers as a client might write them: boundaries ±1 and the forms a lenient parser would take. */
const integerText = (min: number, max: number) =>
  fc.oneof(
    fc.constantFrom(min - 1, min, min + 1, max - 1, max, max + 1, 0, -1).map(String),
    fc.integer().map(String),
    fc.constantFrom(
      '',
      ' 1',
      '1 ',
      '01',
      '1e1',
      '0x10',
      '1.0',
      '+1',
      '-0',
      'NaN',
      'Infinity',
      '١',
      int64Max,
      `${int64Max}0`,
    ),
    fc.string({ unit: 'grapheme-composite' }),
  );
const anyJson = fc.oneof(fc.jsonValue(), fc.constant(null), fc.string({ unit: 'binary' }));
const name = fc.oneof(
  fc.string({ minLength: 0, maxLength: 120, unit: 'binary' }),
  fc.string({ minLength: 99, maxLength: 102, unit: 'grapheme' }),
  fc.constantFrom('', ' Rex', 'Rex ', 'Re\u0000x', 'Re\u0085x', '\ud800', 'a\udfff', '🐶'.repeat(60), 'Rex'),
  anyJson,
);
const categoryId = fc.oneof(
  fc.constantFrom(0, 1, 2, -1, maxSafe, maxSafe + 1, 1.5, 1e300, '1', null, true, [1]),
  fc.integer(),
  fc.double(),
  anyJson,
);
const status = fc.oneof(fc.constantFrom('available', 'pending', 'sold', 'AVAILABLE', '', 'lost'), anyJson);

const newPet = fc.record(
  { name, categoryId, status, id: fc.integer(), colour: fc.string() },
  { requiredKeys: [] },
);
/** Arrays or objects nested `depth` deep, as JSON text: up to the 16 KiB body limit (8,000 deep). */
const nested = (depth: number, object: boolean) =>
  object ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` : `${'['.repeat(depth)}${']'.repeat(depth)}`;
const deep = fc
  .tuple(fc.integer({ min: 1, max: 8_000 }), fc.boolean(), fc.boolean())
  .map(([depth, object, inField]) => {
    const value = nested(object ? Math.min(depth, 2_700) : depth, object);
    return inField ? `{"name":"x","categoryId":${value}}` : value;
  });
const body = fc.oneof(
  newPet.map((v) => JSON.stringify(v)),
  deep,
  anyJson.map((v) => JSON.stringify(v)),
  fc.string({ unit: 'binary' }),
  fc.constantFrom(
    '{',
    '{"name":"Rex","categoryId":1',
    '{"name":"\\ud800","categoryId":1}',
    '[]',
    'null',
    '{}',
  ),
);
const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16le',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset="UTF-8"',
  '',
);
const queryPart = fc.oneof(
  integerText(pageSize.minimum, pageSize.maximum).map((v) => `limit=${encodeURIComponent(v)}`),
  status.map((v) => `status=${encodeURIComponent(String(v))}`),
  fc.string().map((v) => `cursor=${encodeURIComponent(v)}`),
  fc
    .tuple(fc.string({ minLength: 1 }), fc.string())
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`),
  fc.constantFrom('limit=10&limit=20', 'limit', '%ZZ=1', 'limit=%ZZ', 'status[]=sold', 'status[a]=b'),
);
const query = fc
  .array(queryPart, { maxLength: 4 })
  .map((parts) => (parts.length ? `?${parts.join('&')}` : ''));
const petId = fc.oneof(
  integerText(1, maxSafe).map(encodeURIComponent),
  fc.constantFrom('%ZZ', '%E0%A4%A', '%00', '..', '1%2F2', 'a'.repeat(5000), int64Max, '9223372036854775808'),
);
const method = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'PROPFIND');
const authorization = fc.oneof(
  fc.constant('valid'),
  fc.constantFrom(undefined, 'Bearer', 'Bearer ', 'Basic abc', 'Bearer as_000000000000_x', 'bearer  x y'),
);

const request = fc.oneof(
  fc.record({
    method: fc.constant('GET'),
    path: query.map((q) => `/v1/pets${q}`),
    body: fc.constant(undefined),
    contentType,
    authorization,
  }),
  fc.record({ method: fc.constant('POST'), path: fc.constant('/v1/pets'), body, contentType, authorization }),
  fc.record({
    method: fc.constant('GET'),
    path: petId.map((id) => `/v1/pets/${id}`),
    body: fc.constant(undefined),
    contentType,
    authorization,
  }),
  fc.record({
    method,
    path: fc.oneof(
      fc.constantFrom('/v1/pets', '/v1/pets/1', '/v1', '/v1/', '/v1/store/orders', '/v1//pets'),
      petId.map((id) => `/v1/${id}`),
    ),
    body: fc.option(body, { nil: undefined }),
    contentType,
    authorization,
  }),
);

describe('hostile requests built from the contract', () => {
  it('never get a 5xx; failures carry the Error shape; every /v1 answer carries the rate-limit headers', async () => {
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        cases++;
        const headers: Record<string, string> = {};
        if (r.contentType) headers['content-type'] = r.contentType;
        if (r.authorization === 'valid') headers.authorization = `Bearer ${key}`;
        else if (r.authorization !== undefined) headers.authorization = r.authorization;
        const hasBody = r.body !== undefined && !['GET', 'HEAD'].includes(r.method);
        const url = new URL(`${server.url}${r.path}`); // as fetch sends it: dot segments resolved
        const res = await fetch(url, {
          method: r.method,
          headers,
          ...(hasBody && { body: r.body }),
        });
        const text = await res.text();
        expect(res.status, `${r.method} ${r.path}`).toBeLessThan(500);
        if (/^\/v1(\/|$)/.test(url.pathname)) {
          for (const name of rateLimitHeaders) expect(res.headers.get(name), name).not.toBeNull();
        }
        expect(res.headers.get('x-request-id')).not.toBeNull();
        if (res.status >= 400 && r.method !== 'HEAD') {
          expect(JSON.parse(text)).toEqual({
            code: expect.any(String),
            message: expect.any(String),
            status: res.status,
          });
        }
      }),
      { numRuns: 400, seed: Number(process.env.HOSTILE_SEED ?? 20261122) },
    );
    expect(cases).toBeGreaterThanOrEqual(300);
    expect(server.child.exitCode).toBeNull();
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  }, 120_000);
});

describe('bodies nested as deep as the size limit allows', () => {
  const depth = requestBodyLimit / 2 - 192; // just under the limit
  const deepest = nested(depth, false);
  it.each([
    ['a bare array', deepest, {}],
    ['an array in a field', `{"name":"x","categoryId":${nested(depth - 20, false)}}`, {}],
    ['a gzip-encoded array', gzipSync(deepest), { 'content-encoding': 'gzip' }],
  ])('when %s, then 400 in the Error shape', async (_, body, extra) => {
    expect(body.length).toBeLessThanOrEqual(requestBodyLimit);
    const res = await fetch(`${server.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...extra },
      body,
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ code: 'invalid_request', message: expect.any(String), status: 400 });
  });
});
