import { interfaceVersion } from '@animal-store/spec';
import { describe, expect, it } from 'vitest';
import { loadContract, type OpenApiDocument } from '../../src/contract.js';
import { serverVersion } from '../../src/version.js';
import { call, startServer, type TestServer, withServer } from '../support/harness.js';

let server: TestServer;
let key: string;
withServer((started, generous) => {
  server = started;
  key = generous;
});

describe('routes outside the contract', () => {
  it.each([
    ['/v1/nope', 'GET', true],
    ['/v1/store/orders', 'GET', true],
    ['/nope', 'GET', false],
    ['/', 'GET', false],
    ['/v2/pets', 'POST', false],
  ])('when %s is requested, then a JSON 404', async (path, method, authenticated) => {
    const res = await call(`${server.url}${path}`, authenticated ? key : undefined, { method });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ code: 'not_found', message: expect.any(String), status: 404 });
  });

  it('when a path misses the base path (/pets), then the 404 says where the API is', async () => {
    const res = await call(`${server.url}/pets?limit=5`, key);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { message: string }).message).toBe(
      'No route GET /pets. The API is under /v1: GET /v1/pets.',
    );
  });

  it.each([
    ['DELETE', '/v1/pets', 'POST, GET, HEAD'],
    ['PUT', '/v1/pets/1', 'GET, HEAD'],
  ])('when %s %s, then 405 with Allow', async (method, path, allow) => {
    const res = await call(`${server.url}${path}`, key, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect(await res.json()).toEqual({
      code: 'method_not_allowed',
      message: expect.any(String),
      status: 405,
    });
  });

  it.each([
    ['a path that is not valid percent-encoding', '/v1/pets/%ZZ', {}],
    [
      'a body that is not the gzip it claims to be',
      '/v1/pets',
      { method: 'POST', body: 'not gzip', headers: { 'content-encoding': 'gzip' } },
    ],
  ])('when %s, then 400, not 500', async (_, path, init) => {
    const before = await server.petCount();
    const res = await call(`${server.url}${path}`, key, init);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: 'invalid_request',
      message: expect.stringMatching(/^The request could not be read: /),
      status: 400,
    });
    expect(await server.petCount()).toBe(before);
  });

  it('echoes a valid X-Request-Id and generates one otherwise', async () => {
    const mine = await call(`${server.url}/v1/pets`, key, { headers: { 'x-request-id': 'trace-123' } });
    expect(mine.headers.get('x-request-id')).toBe('trace-123');
    const invalid = await call(`${server.url}/v1/pets`, key, { headers: { 'x-request-id': 'bad id!' } });
    expect(invalid.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers /healthz without a key', async () => {
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', version: serverVersion, contract: interfaceVersion });
  });

  it('serves the bundled contract at /openapi.json without a key', async () => {
    const res = await fetch(`${server.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect((await res.json()).info.title).toBe('Animal Store');
  });
});

describe('response validation', () => {
  it('when a stored pet breaks the contract, then the response is a 500 and the violation is reported', async () => {
    // Written behind the API's back: the API itself can never store an empty name.
    const [{ id }] = (await server.sql(
      "INSERT INTO pets (name, category_id, status) VALUES ('', 1, 'sold') RETURNING id",
    )) as [{ id: number }];
    const res = await call(`${server.url}/v1/pets/${id}`, key);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      code: 'internal_error',
      message: 'An unexpected error occurred.',
      status: 500,
    });
    expect(server.violations).toEqual([expect.objectContaining({ method: 'GET', path: `/v1/pets/${id}` })]);
    expect(server.logs.join('')).not.toMatch(/"stack"/);
    await server.sql('DELETE FROM pets WHERE id = ?', id);
    server.violations.length = 0; // seen and asserted; withServer checks after the file that nothing else broke
  });

  it('5xx bodies are judged against the contract too: one that breaks it is reported, and the generic 500 sent', async () => {
    // A stricter copy of the contract, whose Error messages may hold 10 characters: every 5xx body breaks it.
    const strict = structuredClone(loadContract()) as OpenApiDocument & {
      components: { schemas: { Error: { properties: { message: Record<string, unknown> } } } };
    };
    strict.components.schemas.Error.properties.message.maxLength = 10;
    const strictServer = await startServer({ contract: strict });
    try {
      const strictKey = await strictServer.key({ perMinute: 100, perDay: 1000 });
      const [{ id }] = (await strictServer.sql(
        "INSERT INTO pets (name, category_id, status) VALUES ('', 1, 'sold') RETURNING id",
      )) as [{ id: number }];
      const res = await call(`${strictServer.url}/v1/pets/${id}`, strictKey);
      expect(res.status).toBe(500);
      expect((await res.json()).code).toBe('internal_error');
      // the stored pet's violation, then the 500 body's own (its message is longer than 10)
      expect(strictServer.violations.map((v) => v.message)).toEqual([
        expect.any(String),
        expect.stringContaining('message'),
      ]);
    } finally {
      strictServer.violations.length = 0;
      await strictServer.close();
    }
  });
});
