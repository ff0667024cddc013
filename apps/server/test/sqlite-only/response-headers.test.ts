// The response headers the contract declares, checked against it on real answers (express-openapi-validator
// validates response bodies, never headers): for a 200, 201, 400, 401, 404, 429 and 503 of each operation,
// every header the contract's response requires is there, and every declared header that is there has a
// value its schema accepts (Ajv, the contract's own schemas). The rate-limit headers are on every answer.
import { readFileSync } from 'node:fs';
import { bundledSpecPath } from '@animal-store/spec/files';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { call, holdWriteLock, rateLimitHeaders, type TestServer, withServer } from '../support/harness.js';

type Header = { required?: boolean; schema?: object; $ref?: string };
type Response = { headers?: Record<string, Header>; $ref?: string };
const contract = JSON.parse(readFileSync(bundledSpecPath, 'utf8')) as {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, Response> }>>;
  components: { responses: Record<string, Response>; headers: Record<string, Header> };
};
const ajv = new Ajv2020({ strict: false });
ajv.addSchema(contract, 'contract');
const deref = <T extends { $ref?: string }>(value: T, kind: 'responses' | 'headers'): T =>
  value.$ref ? (contract.components[kind][value.$ref.split('/').pop() as string] as T) : value;

/** The contract's declared headers for an operation's status, with whether each is required. */
function declared(method: string, path: string, status: number): Record<string, Header> {
  const response = contract.paths[path]?.[method]?.responses[String(status)];
  expect(response, `${method} ${path} ${status} is in the contract`).toBeDefined();
  const headers = deref(response as Response, 'responses').headers ?? {};
  return Object.fromEntries(Object.entries(headers).map(([name, h]) => [name, deref(h, 'headers')]));
}

/** Every required header present; every declared header present has a value its schema accepts. */
function expectHeadersKeepContract(res: Response & globalThis.Response, method: string, path: string) {
  const headers = declared(method, path, res.status);
  for (const [name, header] of Object.entries(headers)) {
    const value = res.headers.get(name);
    if (header.required) expect(value, `${res.status} ${name} is required`).not.toBeNull();
    if (value === null || !header.schema) continue;
    const schema = header.schema as { type?: string };
    const typed = schema.type === 'integer' || schema.type === 'number' ? Number(value) : value;
    const validate = ajv.compile(header.schema);
    expect(validate(typed), `${res.status} ${name}: ${value} ${ajv.errorsText(validate.errors)}`).toBe(true);
  }
  return headers;
}

let server: TestServer;
let key: string;
withServer((started, generous) => {
  server = started;
  key = generous;
});

describe('response headers, against the contract', () => {
  it('listPets 200 and 400, createPet 201 and 400, getPet 200 and 404, and a 401', async () => {
    const cases: [string, string, RequestInit, string | undefined, number][] = [
      ['/v1/pets?limit=5', 'get', {}, key, 200],
      ['/v1/pets?limit=0', 'get', {}, key, 400],
      [
        '/v1/pets',
        'post',
        { method: 'POST', body: JSON.stringify({ name: 'Head', categoryId: 1 }) },
        key,
        201,
      ],
      ['/v1/pets', 'post', { method: 'POST', body: JSON.stringify({ name: '' }) }, key, 400],
      ['/v1/pets/1', 'get', {}, key, 200],
      ['/v1/pets/999999', 'get', {}, key, 404],
      ['/v1/pets', 'get', {}, undefined, 401],
    ];
    for (const [url, method, init, bearer, status] of cases) {
      const res = await call(`${server.url}${url}`, bearer, init);
      expect(res.status, url).toBe(status);
      const path = url.startsWith('/v1/pets/') ? '/pets/{petId}' : '/pets';
      const headers = expectHeadersKeepContract(res as never, method, path);
      const names = Object.keys(headers).map((name) => name.toLowerCase());
      for (const name of rateLimitHeaders) expect(names, `${status} declares ${name}`).toContain(name);
    }
  });

  it('a 429 and a 503 keep it too (Retry-After, the rate-limit headers)', async () => {
    const limited = await server.key({ perMinute: 1, perDay: 100 });
    await call(`${server.url}/v1/pets`, limited);
    const refused = await call(`${server.url}/v1/pets`, limited);
    expect(refused.status).toBe(429);
    expectHeadersKeepContract(refused as never, 'get', '/pets');

    if (server.location.DATABASE_URL.startsWith('postgres')) return; // the 503 of SQLite's held lock
    const holder = await holdWriteLock(server.location.DATABASE_URL, 6_500);
    try {
      const unavailable = await call(`${server.url}/v1/pets`, key, {
        method: 'POST',
        body: JSON.stringify({ name: 'Later', categoryId: 1 }),
      });
      expect(unavailable.status).toBe(503);
      expectHeadersKeepContract(unavailable as never, 'post', '/pets');
    } finally {
      holder.kill('SIGKILL');
    }
  }, 30_000);
});
