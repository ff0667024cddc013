// The typed client against an independent implementation of the contract: `prism mock`.
import { ApiError, createClient, type DeprecationNotice } from '@animal-store/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prismMock, type Running } from './processes.js';

let mock: Running;
beforeAll(async () => {
  mock = await prismMock();
});
afterAll(() => mock.stop());

/** A fake clock: records every wait and returns at once. */
function fakeClock() {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
}

function client(
  options: { prefer?: string; retry?: Parameters<typeof createClient>[0]['retry']; baseUrl?: string } = {},
) {
  const clock = fakeClock();
  const requests: Request[] = [];
  const notices: DeprecationNotice[] = [];
  const api = createClient({
    baseUrl: options.baseUrl ?? mock.url,
    apiKey: 'as_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    headers: options.prefer ? { Prefer: options.prefer } : {},
    retry: { sleep: clock.sleep, random: () => 0.5, ...options.retry },
    onDeprecation: (n) => void notices.push(n),
    fetch: (request) => {
      requests.push(request);
      return fetch(request);
    },
  });
  return { api, clock, requests, notices };
}

const failure = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
};

describe('client against prism mock: success paths', () => {
  it('listPets answers the Pets example and sends the bearer key', async () => {
    const { api, requests } = client();
    const pets = await api.listPets({ limit: 2, status: 'available' });
    expect(pets).toEqual([
      expect.objectContaining({ id: 1, name: 'Rex' }),
      expect.objectContaining({ id: 2 }),
    ]);
    expect(requests[0]?.headers.get('authorization')).toMatch(/^Bearer as_/);
    expect(new URL(requests[0]?.url as string).search).toBe('?limit=2&status=available');
  });

  it('listPetsPage reads the next cursor from the Link header', async () => {
    const { api } = client();
    expect((await api.listPetsPage()).nextCursor).toBe('WzIwLG51bGxd.c2FtcGxlLXNpZ25hdHVyZQ');
  });

  it('createPet answers the created Pet', async () => {
    const { api } = client();
    expect(await api.createPet({ name: 'Rex', categoryId: 1 })).toEqual({
      id: 42,
      name: 'Rex',
      categoryId: 1,
      status: 'available',
    });
  });

  it('getPet answers the Pet and warns once about the deprecation (the mock sends `Deprecation: true`)', async () => {
    const { api, notices } = client();
    expect((await api.getPet(42)).id).toBe(42);
    await api.getPet(42);
    expect(notices).toEqual([
      {
        operation: 'getPet',
        deprecation: true,
        sunset: new Date('2030-12-05T00:00:00Z'),
        successor: '/v1/pets?id=42',
      },
    ]);
  });

  it('exposes the last rate-limit state', async () => {
    const { api } = client();
    await api.listPets();
    expect(api.rateLimit).toEqual({ limit: 60, remaining: 59, reset: new Date(1_796_000_000_000) });
  });
});

describe('client against prism mock: error paths', () => {
  it.each([
    ['listPets', 'code=401', (api: ReturnType<typeof client>['api']) => api.listPets(), 401, 'unauthorized'],
    [
      'createPet',
      'code=400',
      (api: ReturnType<typeof client>['api']) => api.createPet({ name: 'Rex', categoryId: 1 }),
      400,
      'invalid_request',
    ],
    [
      'createPet',
      'code=415',
      (api: ReturnType<typeof client>['api']) => api.createPet({ name: 'Rex', categoryId: 1 }),
      415,
      'unsupported_media_type',
    ],
    ['getPet', 'code=404', (api: ReturnType<typeof client>['api']) => api.getPet(7), 404, 'not_found'],
    ['getPet', 'code=410', (api: ReturnType<typeof client>['api']) => api.getPet(7), 410, 'gone'],
  ])('%s with Prefer %s: a typed error, not retried', async (_, prefer, call, status, code) => {
    const { api, requests } = client({ prefer });
    const error = await failure(call(api));
    expect(error).toMatchObject({ status, code, requestId: '0b6f3c1e-2d4a-4c55-9e0f-7f8a1c2b3d4e' });
    expect(error.message).toEqual(expect.any(String));
    expect(error.rateLimit).toMatchObject({ limit: 60, remaining: 59 });
    expect(requests).toHaveLength(1);
  });
});

describe('client retries on 429 (fake clock)', () => {
  it('retries up to maxAttempts, never sooner than Retry-After, then throws rate_limited', async () => {
    const { api, clock, requests } = client({ prefer: 'code=429', retry: { maxRetryDelayMs: 60_000 } });
    const error = await failure(api.listPets());
    expect(error).toMatchObject({
      status: 429,
      code: 'rate_limited',
      rateLimit: expect.objectContaining({ retryAfter: 17 }),
    });
    expect(requests).toHaveLength(4);
    expect(clock.waits).toEqual([17_000, 17_000, 17_000]);
  });

  it('uses exponential backoff with full jitter when it exceeds Retry-After', async () => {
    const { api, clock } = client({
      prefer: 'code=429',
      retry: {
        baseDelayMs: 10_000,
        maxDelayMs: 100_000,
        random: () => 0.99,
        maxTotalWaitMs: 1_000_000,
        maxRetryDelayMs: 60_000,
        maxAttempts: 5,
      },
    });
    await failure(api.listPets());
    // ceilings 10 s, 20 s, 40 s, 80 s; 99 % of each, floored, but never under Retry-After (17 s)
    expect(clock.waits).toEqual([17_000, 19_800, 39_600, 79_200]);
  });

  it('stops when the next wait would exceed the total budget', async () => {
    const { api, clock, requests } = client({
      prefer: 'code=429',
      retry: { maxTotalWaitMs: 20_000, maxRetryDelayMs: 60_000 },
    });
    await failure(api.createPet({ name: 'Rex', categoryId: 1 }));
    expect(requests).toHaveLength(2);
    expect(clock.waits).toEqual([17_000]);
  });

  it('does not block on a Retry-After past maxRetryDelayMs (10 s by default): the 429 comes back at once', async () => {
    const { api, clock, requests } = client({ prefer: 'code=429' });
    const error = await failure(api.listPets());
    expect(error.retryAfter).toBe(17);
    expect(requests).toHaveLength(1);
    expect(clock.waits).toEqual([]);
  });

  it('retries network errors for GET, and for createPet with the same Idempotency-Key each time', async () => {
    const closed = 'http://127.0.0.1:9'; // the discard port: nothing listens there
    const get = client({ baseUrl: closed });
    await expect(get.api.listPets()).rejects.toMatchObject({ name: 'ConnectionError', reason: 'network' });
    expect(get.requests).toHaveLength(4);
    const post = client({ baseUrl: closed });
    await expect(post.api.createPet({ name: 'Rex', categoryId: 1 })).rejects.toMatchObject({
      reason: 'network',
    });
    expect(post.requests).toHaveLength(4);
    const keys = new Set(post.requests.map((r) => r.headers.get('idempotency-key')));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);
  });
});
