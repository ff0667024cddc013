// What no stored value, request shape or method may do: break the contract for later readers, or pass
// under /v1 without being identified and counted.
import { readFileSync } from 'node:fs';
import { bundledSpecPath } from '@animal-store/spec/files';
import { describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../../src/contract.js';
import {
  call,
  expectServiceUnavailable,
  parseRaw,
  rateLimitHeaders,
  rawRequest,
  startServer,
  type TestServer,
  withServer,
} from '../support/harness.js';

let server: TestServer;
let key: string;
const count = () => server.petCount();
const post = (body: string | Buffer, contentType = 'application/json') =>
  call(`${server.url}/v1/pets`, key, {
    method: 'POST',
    body: typeof body === 'string' ? body : new Blob([new Uint8Array(body)]),
    headers: { 'content-type': contentType },
  });
const error = (status: number, message: RegExp | string = /./) => ({
  code: expect.any(String),
  message: typeof message === 'string' ? message : expect.stringMatching(message),
  status,
});

withServer((started, generous) => {
  server = started;
  key = generous;
});

describe('names that cannot be stored and returned exactly', () => {
  it.each([
    ['one lone high surrogate', '"\\ud800"'],
    ['one lone low surrogate', '"Rex\\udfff"'],
    ['34 lone surrogates', `"${'\\ud800'.repeat(34)}"`],
    ['a reversed pair', '"\\udc00\\ud800"'],
  ])('when the name is %s, then 400 names body.name and nothing is stored', async (_, name) => {
    const before = await count();
    const res = await post(`{"name":${name},"categoryId":1}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(error(400, /^body\.name /));
    expect(await count()).toBe(before);
  });

  it('when the name is a proper surrogate pair (an emoji), then it is stored and returned exactly', async () => {
    const res = await post('{"name":"Rex \\ud83d\\udc36","categoryId":1}');
    expect(res.status).toBe(201);
    expect((await res.json()).name).toBe('Rex 🐶');
  });

  it('when the body is not valid UTF-8, then 400 says so and nothing is stored', async () => {
    const before = await count();
    const body = Buffer.concat([
      Buffer.from('{"name":"Re'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('x","categoryId":1}'),
    ]);
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(error(400, 'The request body is not valid UTF-8.'));
    expect(await count()).toBe(before);
  });

  it('after such attempts, every list page and status page still answers 200', async () => {
    for (const query of ['', '?status=available', '?limit=100']) {
      expect((await call(`${server.url}/v1/pets${query}`, key)).status).toBe(200);
    }
  });
});

describe('a create whose response would break the contract', () => {
  it('is answered 500, reported, and commits nothing', async () => {
    // The same contract, except that a returned Pet's name may be at most 3 characters: a create of
    // "Rexxx" passes request validation and can only fail on the way out.
    const contract = JSON.parse(readFileSync(bundledSpecPath, 'utf8')) as OpenApiDocument & {
      components: { schemas: { Pet: { properties: Record<string, unknown> } } };
    };
    contract.components.schemas.Pet.properties.name = { type: 'string', maxLength: 3 };
    const strict = await startServer({ contract });
    try {
      const strictKey = await strict.key({ perMinute: 100, perDay: 1000 });
      const res = await call(`${strict.url}/v1/pets`, strictKey, {
        method: 'POST',
        body: JSON.stringify({ name: 'Rexxx', categoryId: 1 }),
      });
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual(error(500, 'An unexpected error occurred.'));
      expect(await strict.petCount()).toBe(0);
      expect(strict.violations).toEqual([expect.objectContaining({ method: 'POST', path: '/v1/pets' })]);
      // Counted for the alert rules (deploy/prometheus: AnimalStoreContractViolation).
      const scrape = await (await fetch(`${strict.url}/metrics`)).text();
      expect(scrape).toMatch(/^animal_store_contract_violations_total\{api="public"\} 1$/m);
      strict.violations.length = 0; // seen and asserted
      strict.expectNoContractViolations();
      expect(await (await call(`${strict.url}/v1/pets`, strictKey)).json()).toEqual([]);
    } finally {
      await strict.close();
    }
  });
});

describe('every /v1 request is identified and counted', () => {
  it('when OPTIONS /v1/pets/1 comes without a key, then 401 with the rate-limit headers, counted per address', async () => {
    const anonymous = await startServer({ limits: { anonymousPerMinute: 2 } });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) {
        const res = await call(`${anonymous.url}/v1/pets/1`, undefined, { method: 'OPTIONS' });
        for (const name of rateLimitHeaders) expect(res.headers.get(name)).not.toBeNull();
        expect(await res.json()).toEqual(error(res.status));
        statuses.push(res.status);
      }
      expect(statuses).toEqual([401, 401, 429]);
    } finally {
      anonymous.expectNoContractViolations();
      await anonymous.close();
    }
  });

  it('when OPTIONS comes with a key, then 405 with Allow, counted against the key', async () => {
    const mine = await server.key({ perMinute: 50, perDay: 1000 });
    const first = await call(`${server.url}/v1/pets/1`, mine, { method: 'OPTIONS' });
    const second = await call(`${server.url}/v1/pets`, mine, { method: 'OPTIONS' });
    expect(first.status).toBe(405);
    expect(first.headers.get('allow')).toBe('GET, HEAD');
    expect(second.headers.get('allow')).toBe('POST, GET, HEAD');
    expect(await first.json()).toEqual(error(405));
    expect(first.headers.get('x-ratelimit-remaining')).toBe('49');
    expect(second.headers.get('x-ratelimit-remaining')).toBe('48');
  });

  it.each(['/v1/pets/%ZZ', '/v1/pets/%E0%A4%A'])(
    'when %s comes without a key, then 401 (the key check comes first) with the rate-limit headers',
    async (path) => {
      const res = await call(`${server.url}${path}`, undefined);
      expect(res.status).toBe(401);
      for (const name of rateLimitHeaders) expect(res.headers.get(name)).not.toBeNull();
    },
  );

  it.each(['/v1/pets/%ZZ', '/v1/pets/%E0%A4%A'])(
    'when %s comes with a key, then 400, counted',
    async (path) => {
      const mine = await server.key({ perMinute: 50, perDay: 1000 });
      const res = await call(`${server.url}${path}`, mine);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(error(400, /not valid percent-encoding/));
      expect(res.headers.get('x-ratelimit-remaining')).toBe('49');
    },
  );
});

describe('answers made before the router are counted too', () => {
  it.each([
    ['Expect: bogus', (host: string) => `GET /v1/pets HTTP/1.1\r\nHost: ${host}\r\nExpect: bogus\r\n`, 417],
    ['an empty authority', (host: string) => `GET http:///v1/pets HTTP/1.1\r\nHost: ${host}\r\n`, 200],
  ])(
    'when %s, then the answer carries the rate-limit headers and is counted against the key',
    async (_, head, status) => {
      const mine = await server.key({ perMinute: 50, perDay: 1000 });
      const { host } = new URL(server.url);
      const { text } = await rawRequest(
        server.url,
        `${head(host)}Authorization: Bearer ${mine}\r\nConnection: close\r\n\r\n`,
      );
      const res = parseRaw(text);
      expect(res.status).toBe(status);
      for (const name of rateLimitHeaders) expect(res.headers[name], name).toBeDefined();
      expect(res.headers['x-ratelimit-remaining']).toBe('49');
      expect((await call(`${server.url}/v1/pets`, mine)).headers.get('x-ratelimit-remaining')).toBe('48');
    },
  );
});

describe('HEAD', () => {
  it('is answered like GET without a body, and counted like GET', async () => {
    const mine = await server.key({ perMinute: 50, perDay: 1000 });
    const get = await call(`${server.url}/v1/pets?limit=5`, mine);
    const head = await call(`${server.url}/v1/pets?limit=5`, mine, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
    expect(head.headers.get('x-ratelimit-remaining')).toBe('48');
  });

  it('on getPet carries the deprecation headers and the status of GET', async () => {
    const { id } = await (await post('{"name":"Head","categoryId":1}')).json();
    const head = await call(`${server.url}/v1/pets/${id}`, key, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('deprecation')).toMatch(/^@\d+$/);
    const missing = await call(`${server.url}/v1/pets/999999999`, key, { method: 'HEAD' });
    expect(missing.status).toBe(404);
    expect(server.logs.join('')).toMatch(/"method":"HEAD"/);
  });
});

describe('absolute-form request targets', () => {
  it('GET http://host/v1/pets is answered like GET /v1/pets', async () => {
    const { host } = new URL(server.url);
    const { text } = await rawRequest(
      server.url,
      `GET http://${host}/v1/pets?limit=1 HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`,
    );
    const res = parseRaw(text);
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
  });
});

describe('strict requests', () => {
  it.each(['id[]=3', 'id[]=3&limit=1', 'id%5B%5D=3', 'status[x]=sold', 'limit[]=5'])(
    'when %s (a bracketed name), then 400 names it, never an unfiltered page',
    async (query) => {
      const res = await call(`${server.url}/v1/pets?${query}`, key);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(error(400, /^query\.\w+\[/));
    },
  );

  it.each(['limit=0x10', 'limit=1e1', 'limit=%201', 'limit=01', 'limit=10.0', 'limit=+5'])(
    'when %s, then 400 names query.limit',
    async (query) => {
      const res = await call(`${server.url}/v1/pets?${query}`, key);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(error(400, /^query\.limit /));
    },
  );

  it('when the body is declared charset=utf-16le, then 415 and nothing is stored', async () => {
    const before = await count();
    const res = await post('{"name":"Rex","categoryId":1}', 'application/json; charset=utf-16le');
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual(error(415, 'The request body must be application/json in UTF-8.'));
    expect(await count()).toBe(before);
  });

  it('a GET has no body, so a charset its Content-Type names is not judged: 200', async () => {
    const res = await fetch(`${server.url}/v1/pets?limit=1`, {
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json; charset=utf-16le' },
    });
    expect(res.status).toBe(200);
  });

  it.each(['null', '42', '"Rex"', 'true'])(
    'when the body is the JSON %s, then 400 asks for an object',
    async (body) => {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(error(400, 'The request body must be a JSON object.'));
    },
  );

  it('when Content-Length declares more than the limit, then 413 at once, without reading the body', async () => {
    const { host } = new URL(server.url);
    const { text, closed, elapsedMs } = await rawRequest(
      server.url,
      `POST /v1/pets HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n{"name":`,
    );
    const res = parseRaw(text);
    expect(res.status).toBe(413);
    expect(res.headers.connection).toBe('close');
    expect(res.body).toEqual(error(413, /16 KiB/));
    expect(closed).toBe(true);
    expect(elapsedMs).toBeLessThan(1_500);
  });
});

describe('secrets in the query string', () => {
  it('are not written to the log; documented parameters are', async () => {
    const secret = 'as_0123456789ab_secretsecretsecretsecretsecretsecretsecret1';
    await call(`${server.url}/v1/pets?api_key=${secret}&limit=3&token=${secret}`, key);
    const logs = server.logs.join('');
    expect(logs).not.toContain('secretsecret');
    expect(logs).toContain('/v1/pets?api_key=[redacted]&limit=3&token=[redacted]');
  });
});

describe('readiness', () => {
  it('when the store cannot be read, then /readyz answers 503 in the Error shape while /healthz stays ok', async () => {
    const failing = await startServer();
    try {
      expect((await fetch(`${failing.url}/readyz`)).status).toBe(200);
      await failing.store.close(); // the store goes away behind the service's back
      const res = await fetch(`${failing.url}/readyz`);
      await expectServiceUnavailable(res);
      expect((await fetch(`${failing.url}/healthz`)).status).toBe(200);
    } finally {
      await failing.close().catch(() => {}); // the store is closed already: only the rest is left to close
    }
  });
});
