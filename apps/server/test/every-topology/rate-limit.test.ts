import { afterEach, describe, expect, it } from 'vitest';
import { recheckMs } from '../../src/limits/lease-terms.js';
import {
  call,
  freshStore,
  type ServerProcess,
  startProcess,
  startServer,
  type TestServer,
  tokenParts,
} from '../support/harness.js';

const open: TestServer[] = [];
const processes: ServerProcess[] = [];
const serve = async (...args: Parameters<typeof startServer>) => {
  const server = await startServer(...args);
  open.push(server);
  return server;
};
afterEach(async () => {
  await Promise.all([
    ...open.splice(0).map((s) => {
      s.expectNoContractViolations();
      return s.close();
    }),
    ...processes.splice(0).map((p) => p.stop()),
  ]);
});

const header = (res: Response, name: string) => res.headers.get(name);
const int = (res: Response, name: string) => Number(res.headers.get(name));
const now = () => Date.now() / 1000;
const list = (server: { url: string }, key?: string, query = '') =>
  call(`${server.url}/v1/pets${query}`, key);

describe('rate limits by key', () => {
  it('admits exactly the per-minute quota, with the headers counting down', async () => {
    const server = await serve();
    const key = await server.key({ perMinute: 5, perDay: 100 });
    const statuses: number[] = [];
    // The windows start with the first request, between `started` and its answer, and end 60 s and a day
    // later: every answer names that end, however long a busy machine takes to answer.
    const started = now();
    const resets = new Set<number>();
    for (let i = 0; i < 5; i++) {
      const sent = now();
      const res = await list(server, key);
      const answered = now();
      statuses.push(res.status);
      expect(int(res, 'x-ratelimit-limit')).toBe(5);
      expect(int(res, 'x-ratelimit-remaining')).toBe(4 - i);
      const reset = int(res, 'x-ratelimit-reset');
      resets.add(reset);
      expect(reset).toBeGreaterThanOrEqual(Math.floor(started) + 60);
      expect(reset).toBeLessThanOrEqual(Math.ceil(answered) + 60);
      expect(header(res, 'ratelimit-policy')).toBe('"minute";q=5;w=60, "day";q=100;w=86400');
      const [, minuteLeft, minuteT, dayLeft, dayT] = /^"minute";r=(\d+);t=(\d+), "day";r=(\d+);t=(\d+)$/
        .exec(header(res, 'ratelimit') ?? '')
        ?.map(Number) ?? [0, -1, -1, -1, -1];
      expect([minuteLeft, dayLeft]).toEqual([4 - i, 99 - i]);
      // `t` counts down to the same end: the seconds left when the answer was made (between `sent` and
      // `answered`), rounded up; `reset` is that end rounded up.
      expect(minuteT).toBeGreaterThan(reset - 1 - answered);
      expect(minuteT).toBeLessThanOrEqual(reset - sent + 1);
      expect(dayT).toBeGreaterThanOrEqual(86_400 - Math.ceil(answered - started) - 1);
      expect(dayT).toBeLessThanOrEqual(86_400);
    }
    // (An end read from Redis's time-to-live may round to the next second.)
    expect(Math.max(...resets) - Math.min(...resets)).toBeLessThanOrEqual(1);
    const limited = await list(server, key);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({
      code: 'rate_limited',
      message: expect.stringMatching(/retry in \d+ seconds/),
      status: 429,
    });
    const retryAfter = int(limited, 'retry-after');
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Retry-After points at the same instant as X-RateLimit-Reset (both rounded up to whole seconds).
    expect(Math.abs(int(limited, 'x-ratelimit-reset') - Math.ceil(now() + retryAfter))).toBeLessThanOrEqual(
      1,
    );
    expect(int(limited, 'x-ratelimit-remaining')).toBe(0);
  });

  it('counts requests answered 400 and 404 too', async () => {
    const server = await serve();
    const key = await server.key({ perMinute: 3, perDay: 100 });
    expect((await list(server, key, '?limit=0')).status).toBe(400);
    expect((await call(`${server.url}/v1/pets/999`, key)).status).toBe(404);
    const last = await list(server, key);
    expect(last.status).toBe(200);
    expect(int(last, 'x-ratelimit-remaining')).toBe(0);
    const limited = await list(server, key, '?limit=0');
    expect(limited.status).toBe(429);
    expect(header(limited, 'x-ratelimit-limit')).toBe('3');
  });

  it('does not count requests answered 429 against the day', async () => {
    const server = await serve();
    const key = await server.key({ perMinute: 2, perDay: 50 });
    for (let i = 0; i < 2; i++) expect((await list(server, key)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await list(server, key)).status).toBe(429);
    const res = await list(server, key);
    expect(header(res, 'ratelimit')).toMatch(/"day";r=48;/);
  });

  it('limits by the day window, and the headers describe the window with the fewest remaining', async () => {
    const server = await serve();
    const key = await server.key({ perMinute: 100, perDay: 7 });
    for (let i = 0; i < 7; i++) {
      const res = await list(server, key);
      expect(res.status).toBe(200);
      expect(int(res, 'x-ratelimit-limit')).toBe(7);
      expect(int(res, 'x-ratelimit-remaining')).toBe(6 - i);
      expect(int(res, 'x-ratelimit-reset')).toBeGreaterThan(now() + 86_000);
    }
    const limited = await list(server, key);
    expect(limited.status).toBe(429);
    expect(int(limited, 'retry-after')).toBeGreaterThan(86_000);
    expect(header(limited, 'ratelimit')).toMatch(/^"minute";r=93;t=\d+, "day";r=0;t=\d+$/);
  });

  it('when both windows are exhausted, Retry-After and every header name the day, not the minute', async () => {
    const server = await serve();
    const key = await server.key({ perMinute: 7, perDay: 7 });
    for (let i = 0; i < 7; i++) expect((await list(server, key)).status).toBe(200);
    const limited = await list(server, key);
    expect(limited.status).toBe(429);
    const wait = int(limited, 'retry-after');
    expect(wait).toBeGreaterThan(86_000);
    expect((await limited.json()).message).toContain(`retry in ${wait} seconds`);
    expectOneWait(limited, wait);
  });

  it('a minute refusal from a server that never served the key tells its day as the store has it, not untouched', async () => {
    const store = await freshStore();
    const [first, second] = [await serve({ store }), await serve({ store })];
    const key = await first.key({ perMinute: 5, perDay: 100 });
    for (let i = 0; i < 5; i++) expect((await list(first, key)).status).toBe(200);
    const limited = await list(second, key);
    expect(limited.status).toBe(429);
    // 5 of the day used, and what the first holds unused in its lease counted as used (the headers'
    // rule): at most 95 left; never the day's whole limit, as if the key had not been used.
    const day = /^"minute";r=0;t=\d+, "day";r=(\d+);t=(\d+)$/.exec(header(limited, 'ratelimit') ?? '');
    expect(Number(day?.[1])).toBeLessThanOrEqual(95);
    expect(Number(day?.[1])).toBeGreaterThan(0);
    expect(Number(day?.[2])).toBeLessThanOrEqual(86_400);
  });

  it('on a tie, describes the shorter window', async () => {
    const server = await serve();
    const key = await server.key({ perMinute: 5, perDay: 5 });
    const res = await list(server, key);
    expect(int(res, 'x-ratelimit-remaining')).toBe(4);
    expect(int(res, 'x-ratelimit-reset')).toBeLessThanOrEqual(Math.ceil(now() + 60));
  });

  it('uses the plan table for non-enterprise keys', async () => {
    const server = await serve();
    const res = await list(server, await server.keyOf('pro'));
    expect(header(res, 'ratelimit-policy')).toBe('"minute";q=300;w=60, "day";q=10000;w=86400');
  });
});

/** Retry-After, X-RateLimit-Reset and every exhausted window of RateLimit name the same wait (±1 s rounding). */
function expectOneWait(res: Response, wait: number) {
  expect(int(res, 'x-ratelimit-remaining')).toBe(0);
  expect(Math.abs(int(res, 'x-ratelimit-reset') - Math.ceil(now() + wait))).toBeLessThanOrEqual(1);
  const exhausted = [...String(header(res, 'ratelimit')).matchAll(/r=0;t=(\d+)/g)].map((m) => Number(m[1]));
  expect(exhausted.length).toBeGreaterThan(0);
  for (const t of exhausted) expect(Math.abs(t - wait)).toBeLessThanOrEqual(1);
}

describe('temporary ban', () => {
  it('bans a key that keeps sending while limited, then lifts the ban', async () => {
    const server = await serve({ limits: { ban: { threshold: 3, seconds: 2, graceSeconds: 0 } } });
    const key = await server.key({ perMinute: 1, perDay: 100 });
    expect((await list(server, key)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await (await list(server, key)).json()).code).toBe('rate_limited');
    const banned = await list(server, key);
    expect(banned.status).toBe(429);
    expect(await banned.json()).toEqual({
      code: 'temporarily_banned',
      message: expect.any(String),
      status: 429,
    });
    // The ban (2 s) ends before the minute window (about a minute): the wait is the minute's, and every
    // header tells the same wait.
    const wait = int(banned, 'retry-after');
    expect(wait).toBeGreaterThan(50);
    expectOneWait(banned, wait);
    expect(header(banned, 'x-ratelimit-limit')).toBe('1');
    const stillBanned = await list(server, key);
    expect((await stillBanned.json()).code).toBe('temporarily_banned');
    await new Promise((r) => setTimeout(r, 2_100));
    // The ban is over; the minute window is still exhausted.
    expect((await (await list(server, key)).json()).code).toBe('rate_limited');
  });

  it("reaches another instance that never refused the key, by the ban list, within the list's second", async () => {
    const store = await freshStore();
    const limits = { ban: { threshold: 2, seconds: 600, graceSeconds: 0 } };
    const [a, b] = [await serve({ store, limits }), await serve({ store, limits })];
    const key = await a.key({ perMinute: 1, perDay: 100 });
    expect((await list(a, key)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await (await list(a, key)).json()).code).toBe('rate_limited');
    expect((await (await list(a, key)).json()).code).toBe('temporarily_banned');
    // The windows start over behind the API, the ban kept: `b` could take points from the store, so only
    // the ban list tells it the key is banned before its first take.
    await a.limiter.resetWindows(tokenParts(key).id, ['minute', 'day']);
    await new Promise((r) => setTimeout(r, recheckMs + 500)); // the list's second: the bound is the promise
    const res = await list(b, key);
    expect(res.status).toBe(429);
    expect((await res.json()).code).toBe('temporarily_banned');
    expect(int(res, 'retry-after')).toBeGreaterThan(590);
  });
});

describe('requests without a valid key', () => {
  it('are limited per client address, with the same headers', async () => {
    const server = await serve({ limits: { anonymousPerMinute: 3 } });
    for (let i = 0; i < 3; i++) {
      const res = await list(server, 'as_000000000000_nope');
      expect(res.status).toBe(401);
      expect(int(res, 'x-ratelimit-limit')).toBe(3);
      expect(int(res, 'x-ratelimit-remaining')).toBe(2 - i);
      expect(header(res, 'ratelimit-policy')).toBe('"minute";q=3;w=60');
    }
    const limited = await list(server);
    expect(limited.status).toBe(429);
    expect(int(limited, 'retry-after')).toBeGreaterThanOrEqual(1);
    expect((await limited.json()).code).toBe('rate_limited');
    // A valid key is counted on its own, not against the address.
    expect((await list(server, await server.key())).status).toBe(200);
  });
});

describe('requests without a valid key behind a proxy', () => {
  it.each([
    [undefined, 429],
    [['loopback'], 401],
  ])('with TRUST_PROXY=%s, clients with other forwarded addresses answer %i', async (trustProxy, status) => {
    const server = await serve({ limits: { anonymousPerMinute: 1 }, ...(trustProxy && { trustProxy }) });
    const from = (address: string) =>
      call(`${server.url}/v1/pets`, undefined, { headers: { 'x-forwarded-for': address } });
    expect((await from('203.0.113.1')).status).toBe(401);
    expect((await from('203.0.113.2')).status).toBe(status);
  });
});

describe('forwarded addresses that are not addresses', () => {
  it('are not taken as the client: counted against the proxy, never reaching the store as a key', async () => {
    const server = await serve({ limits: { anonymousPerMinute: 2 }, trustProxy: ['loopback'] });
    const statuses = [];
    for (const forwarded of ['x'.repeat(300), 'not-an-address', '203.0.113.9, <script>']) {
      const res = await call(`${server.url}/v1/pets`, undefined, {
        headers: { 'x-forwarded-for': forwarded },
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 429]);
    expect(server.logs.join('')).not.toContain('xxxxxxxxxx');
  });
});

describe('exactness', () => {
  it('admits exactly 20 of 200 concurrent requests against a 20/min key', async () => {
    const server = await serve();
    const key = await server.key({ perMinute: 20, perDay: 1000 });
    const statuses = await Promise.all(
      Array.from({ length: 200 }, () => list(server, key).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    // The other 180 refused: 429, but for a request the store could not take within its deadline while the
    // machine ran every project (503, its answer to overload: 4, then 14 of 200 on PostgreSQL in rehearsals,
    // the slowest answered after 5.6 s). Most are the limiter's 429: a limiter that answered none would
    // leave them all to the store's deadline.
    expect(statuses.filter((s) => s !== 200 && s !== 429 && s !== 503)).toEqual([]);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(100);
  });

  it('admits exactly the limit across two server processes on one store', async () => {
    const store = await freshStore();
    const seed = await serve({ store });
    const key = await seed.key({ perMinute: 20, perDay: 1000 });
    // Redis may answer slowly while every project runs (a loaded CI machine): the processes wait up to 2 s
    // for it, as the scale-out suite's do, so that what is measured is exactness while it answers, not the
    // fallback to each process's share (docs/rate-limits.md, outages).
    const env = { ...store, NODE_ENV: 'production', REDIS_COMMAND_TIMEOUT_MS: '2000' };
    const [a, b] = await Promise.all([startProcess(env), startProcess(env)]);
    processes.push(a as ServerProcess, b as ServerProcess);
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        list(i % 2 ? (a as ServerProcess) : (b as ServerProcess), key).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
  });

  it('keeps counters and bans across a restart', async () => {
    const store = await freshStore();
    // Redis given the 2 s a loaded machine may need (as the other multi-process suites do): past the
    // default 500 ms a count falls back to this process's memory by design, and is gone after the restart
    // (CI once read 4 remaining of 5 after three requests). What is measured is what Redis keeps.
    const env = { REDIS_COMMAND_TIMEOUT_MS: '2000' };
    const first = await startServer({
      store,
      env,
      limits: { ban: { threshold: 1, seconds: 600, graceSeconds: 0 } },
    });
    const counted = await first.key({ perMinute: 5, perDay: 100 });
    const banned = await first.key({ perMinute: 1, perDay: 100 });
    for (let i = 0; i < 3; i++) await list(first, counted);
    for (let i = 0; i < 3; i++) await list(first, banned);
    first.expectNoContractViolations();
    await first.close();

    const second = await serve({
      store,
      env,
      limits: { ban: { threshold: 1, seconds: 600, graceSeconds: 0 } },
    });
    expect(int(await list(second, counted), 'x-ratelimit-remaining')).toBe(1);
    const res = await list(second, banned);
    expect((await res.json()).code).toBe('temporarily_banned');
    expect(int(res, 'retry-after')).toBeGreaterThan(590);
    expectOneWait(res, int(res, 'retry-after')); // the ban's wait, not the minute window's
  });
});
