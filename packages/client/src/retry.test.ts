import { describe, expect, it } from 'vitest';
import { backoff, defaultRetry, type RetryOptions, retryingFetch } from './retry.js';

/** A clock that only moves when the code under test sleeps. */
function fakeClock() {
  const sleeps: number[] = [];
  return { sleeps, sleep: async (ms: number) => void sleeps.push(ms) };
}
const options = (overrides: Partial<RetryOptions>): RetryOptions => ({ ...defaultRetry, ...overrides });
const tooMany = (retryAfter?: string) =>
  new Response('{}', { status: 429, headers: retryAfter ? { 'retry-after': retryAfter } : {} });
const retryAfterMs = (r: Response) => Number(r.headers.get('retry-after') ?? 0) * 1000;

describe('backoff', () => {
  it.each([
    ['attempt 1 with the highest jitter', { attempt: 1, random: 0.999 }, 499],
    ['attempt 3 with the highest jitter', { attempt: 3, random: 0.999 }, 1998],
    ['attempt 20, capped by maxDelayMs', { attempt: 20, random: 0.999 }, 29_970],
    ['any attempt with no jitter', { attempt: 7, random: 0 }, 0],
  ])('%s', (_, { attempt, random }, want) => {
    expect(backoff(attempt, options({ random: () => random }))).toBe(want);
  });
});

describe('retryingFetch', () => {
  it('waits at least Retry-After, then succeeds', async () => {
    const clock = fakeClock();
    const answers = [tooMany('2'), new Response('[]', { status: 200 })];
    const send = retryingFetch(
      async () => answers.shift() as Response,
      options({ ...clock, random: () => 0 }),
      retryAfterMs,
    );
    expect((await send(new Request('http://x/v1/pets'))).status).toBe(200);
    expect(clock.sleeps).toEqual([2_000]);
  });

  it('gives the 429 back instead of waiting past maxTotalWaitMs', async () => {
    const clock = fakeClock();
    const send = retryingFetch(
      async () => tooMany('900'),
      options({ ...clock, maxTotalWaitMs: 60_000 }),
      retryAfterMs,
    );
    expect((await send(new Request('http://x/v1/pets'))).status).toBe(429);
    expect(clock.sleeps).toEqual([]);
  });

  it('stops after maxAttempts', async () => {
    const clock = fakeClock();
    let sent = 0;
    const send = retryingFetch(
      async () => {
        sent++;
        return tooMany('1');
      },
      options({ ...clock, maxAttempts: 3, random: () => 0 }),
      retryAfterMs,
    );
    expect((await send(new Request('http://x/v1/pets'))).status).toBe(429);
    expect(sent).toBe(3);
    expect(clock.sleeps).toEqual([1_000, 1_000]);
  });

  it('retries a network error for GET, never for POST', async () => {
    const failOnce = () => {
      let failed = false;
      return async () => {
        if (!failed) {
          failed = true;
          throw new TypeError('fetch failed');
        }
        return new Response('[]', { status: 200 });
      };
    };
    const clock = fakeClock();
    const get = retryingFetch(failOnce(), options({ ...clock, random: () => 0.5 }), retryAfterMs);
    expect((await get(new Request('http://x/v1/pets'))).status).toBe(200);
    expect(clock.sleeps).toEqual([250]);
    const post = retryingFetch(failOnce(), options({ ...clock }), retryAfterMs);
    await expect(post(new Request('http://x/v1/pets', { method: 'POST', body: '{}' }))).rejects.toThrow(
      'fetch failed',
    );
  });
});

describe('retryingFetch, 1.1.0', () => {
  const ok = () => new Response('[]', { status: 200 });
  const unavailable = () => new Response('{}', { status: 503, headers: { 'retry-after': '1' } });

  it('does not wait out a Retry-After longer than maxRetryDelayMs: the 429 comes back at once', async () => {
    const clock = fakeClock();
    const send = retryingFetch(
      async () => tooMany('30'),
      options({ ...clock, maxRetryDelayMs: 10_000 }),
      retryAfterMs,
    );
    expect((await send(new Request('http://x/v1/pets'))).status).toBe(429);
    expect(clock.sleeps).toEqual([]);
  });

  it.each([
    ['a GET on 503', () => new Request('http://x/v1/pets'), true],
    ['a POST with an Idempotency-Key on 503', () => postWith({ 'idempotency-key': 'k' }), true],
    ['a POST without an Idempotency-Key on 503', () => postWith({}), false],
  ])('retries %s: %s', async (_, request, retried) => {
    const answers = [unavailable(), ok()];
    const clock = fakeClock();
    const send = retryingFetch(
      async () => answers.shift() as Response,
      options({ ...clock, random: () => 0 }),
      retryAfterMs,
    );
    expect((await send(request())).status).toBe(retried ? 200 : 503);
  });

  it('retries a POST with an Idempotency-Key after a network error, and reports each retry', async () => {
    const events: unknown[] = [];
    let failed = false;
    const send = retryingFetch(
      async () => {
        if (!failed) {
          failed = true;
          throw new TypeError('fetch failed');
        }
        return new Response('{}', { status: 201 });
      },
      options({ ...fakeClock(), random: () => 0.5, onRetry: (e) => events.push(e) }),
      retryAfterMs,
    );
    expect((await send(postWith({ 'idempotency-key': 'k' }))).status).toBe(201);
    expect(events).toEqual([{ attempt: 1, delayMs: 250, reason: 'network' }]);
  });
});

function postWith(headers: Record<string, string>) {
  return new Request('http://x/v1/pets', { method: 'POST', body: '{}', headers });
}
