import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { deprecatedOperations, servers } from '@animal-store/spec';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createClient,
  type DeprecationNotice,
  getPetSunset,
  productionBaseUrl,
  stagingBaseUrl,
} from '../src/index.js';

// A scripted HTTP server on loopback: each request gets the next scripted answer.
type Answer = { status: number; headers?: Record<string, string>; body: unknown };
const running: ReturnType<typeof createServer>[] = [];
async function scripted(answers: Answer[]) {
  const seen: IncomingMessage[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    seen.push(req);
    const answer = answers.shift() ?? { status: 500, body: {} };
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    res.end(JSON.stringify(answer.body));
  });
  running.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen };
}
afterEach(() => {
  for (const s of running.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

const pet = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };
const limited = { code: 'rate_limited', message: 'Rate limit exceeded; retry in 1 seconds.', status: 429 };

describe('createClient', () => {
  it('when a 429 is followed by a 200, then it waits Retry-After and answers the 200', async () => {
    const api = await scripted([
      { status: 429, headers: { 'retry-after': '1' }, body: limited },
      {
        status: 200,
        headers: {
          'x-ratelimit-limit': '60',
          'x-ratelimit-remaining': '58',
          'x-ratelimit-reset': '2000000000',
        },
        body: [pet],
      },
    ]);
    const waits: number[] = [];
    const client = createClient({
      baseUrl: api.url,
      apiKey: 'k',
      retry: { sleep: async (ms) => void waits.push(ms), random: () => 0 },
    });
    expect(await client.listPets()).toEqual([pet]);
    expect(waits).toEqual([1000]);
    expect(api.seen).toHaveLength(2);
    expect(client.rateLimit).toEqual({ limit: 60, remaining: 58, reset: new Date(2_000_000_000_000) });
  });

  it('when a ban outlasts the budget, then it stops at once with temporarily_banned', async () => {
    const api = await scripted([
      {
        status: 429,
        headers: { 'retry-after': '900' },
        body: { code: 'temporarily_banned', message: 'banned', status: 429 },
      },
    ]);
    const client = createClient({
      baseUrl: api.url,
      apiKey: 'k',
      retry: { sleep: async () => expect.fail('must not wait') },
    });
    await expect(client.listPets()).rejects.toMatchObject({ code: 'temporarily_banned', status: 429 });
    expect(api.seen).toHaveLength(1);
  });

  it.each([
    ['RFC 9745 date form', '@1795305600', new Date('2026-11-22T00:00:00Z')],
    ['obsolete draft form', 'true', true],
  ])('reads the Deprecation header in its %s, and warns once', async (_, value, deprecation) => {
    const headers = {
      deprecation: value,
      sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
      link: '</v1/pets>; rel="successor-version"',
    };
    const api = await scripted([
      { status: 200, headers, body: pet },
      { status: 200, headers, body: pet },
    ]);
    const notices: DeprecationNotice[] = [];
    const client = createClient({
      baseUrl: api.url,
      apiKey: 'k',
      onDeprecation: (n) => void notices.push(n),
    });
    await client.getPet(1);
    await client.getPet(1);
    expect(notices).toEqual([
      { operation: 'getPet', deprecation, sunset: new Date('2030-12-05T00:00:00Z'), successor: '/v1/pets' },
    ]);
  });

  it('sends the key as a bearer token', async () => {
    const api = await scripted([{ status: 200, body: [] }]);
    await createClient({ baseUrl: api.url, apiKey: 'as_abc' }).listPets();
    expect(api.seen[0]?.headers.authorization).toBe('Bearer as_abc');
  });
});

// A garbage collection while a call is in flight must not cut its timeout or its signal off the request
// (undici's Request.clone() holds the clone's AbortController only weakly: nodejs/undici#4068).
describe('a call in flight across a garbage collection', () => {
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;

  async function silent() {
    const server = createServer(() => {}); // takes the request and never answers
    running.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    server.on('request', () => gc());
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  }

  it('when its timeout passes, then it fails with reason timeout', async () => {
    const client = createClient({ baseUrl: await silent(), apiKey: 'k' });
    await expect(client.listPets({}, { timeout: 300 })).rejects.toMatchObject({
      name: 'ConnectionError',
      reason: 'timeout',
    });
  }, 5_000);

  it('when its signal aborts, then it fails with reason aborted', async () => {
    const client = createClient({ baseUrl: await silent(), apiKey: 'k' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    await expect(client.listPets({}, { signal: controller.signal })).rejects.toMatchObject({
      name: 'ConnectionError',
      reason: 'aborted',
    });
  }, 5_000);
});

describe('facts taken from the contract', () => {
  it('exports the production and staging base URLs', () => {
    expect([productionBaseUrl, stagingBaseUrl]).toEqual([servers.production, servers.staging]);
  });

  it("getPet's @deprecated text names the contract's removal date and the replacement", () => {
    const source = readFileSync(new URL('../src/index.ts', import.meta.url), 'utf8');
    const doc = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*async getPet/.exec(source)?.[1] ?? '';
    const sunset = deprecatedOperations.find((op) => op.operationId === 'getPet')?.sunset as string;
    expect(getPetSunset).toBe(sunset);
    expect(doc).toContain(`@deprecated Since 1.0.0; removed on ${sunset.slice(0, 10)}`);
    expect(doc).toContain('{@link listPets}');
  });
});
