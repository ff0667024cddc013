// The built client against the built server (no Prism between): what only the real service can show.
import { ApiError, ConnectionError, createClient } from '@animal-store/client';
import { enterprise, freePort } from '@animal-store/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, type Running, server, tempDatabase } from './processes.js';

let live: Running;
let apiKey: string;
beforeAll(async () => {
  const databasePath = tempDatabase();
  apiKey = await createKey(databasePath, ...enterprise(1000, 10_000));
  live = await server(databasePath);
});
afterAll(() => live?.stop());

describe('createPet with its Idempotency-Key', () => {
  it('when the connection drops after the server committed, then the retry replays: one pet, not two', async () => {
    let dropped = 0;
    const client = createClient({
      baseUrl: `${live.url}/v1`,
      apiKey,
      retry: { random: () => 0 },
      // The answer of the first POST is lost on the way back, after the service committed the pet.
      fetch: async (request) => {
        const response = await fetch(request);
        if (request.method === 'POST' && dropped === 0) {
          dropped++;
          throw new TypeError('fetch failed');
        }
        return response;
      },
    });
    const pet = await client.createPet({ name: 'Dropped once', categoryId: 4 });
    expect(dropped).toBe(1);
    expect(await client.listPets({ id: [pet.id] })).toEqual([pet]);
    const named = (await client.listPets({ limit: 100 })).filter((p) => p.name === 'Dropped once');
    expect(named).toHaveLength(1);
  });

  it('with the same key and another body, then ApiError idempotency_key_reused', async () => {
    const client = createClient({ baseUrl: `${live.url}/v1`, apiKey });
    await client.createPet({ name: 'Keyed', categoryId: 1 }, { idempotencyKey: 'contract-k1' });
    await expect(
      client.createPet({ name: 'Other', categoryId: 1 }, { idempotencyKey: 'contract-k1' }),
    ).rejects.toMatchObject({ name: 'ApiError', code: 'idempotency_key_reused', status: 422 });
  });
});

describe('ConnectionError', () => {
  it('when the service cannot be reached, then reason network (after no retries), not a raw TypeError', async () => {
    const port = await freePort(); // nothing listens there
    const client = createClient({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      apiKey,
      retry: { maxAttempts: 1 },
    });
    const error = await client.listPets().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).reason).toBe('network');
    // The cause it wraps, named: not undici's bare "fetch failed".
    expect((error as Error).message).toBe(
      `The service could not be reached: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it('when TLS fails (https to a plain-HTTP port), then the message names the TLS error', async () => {
    const client = createClient({
      baseUrl: `${live.url.replace('http:', 'https:')}/v1`,
      apiKey,
      retry: { maxAttempts: 1 },
    });
    const error = await client.listPets().catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ConnectionError', reason: 'network' });
    expect((error as Error).message).toMatch(/could not be reached: .*(SSL|TLS|wrong version)/i);
    expect((error as Error).message).not.toMatch(/fetch failed/);
  });

  it('when the signal aborts, then reason aborted', async () => {
    const client = createClient({ baseUrl: `${live.url}/v1`, apiKey });
    const controller = new AbortController();
    controller.abort();
    await expect(client.listPets({}, { signal: controller.signal })).rejects.toMatchObject({
      reason: 'aborted',
    });
  });

  it('when the timeout passes first, then reason timeout', async () => {
    const client = createClient({
      baseUrl: `${live.url}/v1`,
      apiKey,
      fetch: async (request) => {
        await new Promise((r) => setTimeout(r, 500)); // a slow network
        return fetch(request);
      },
    });
    await expect(client.listPets({}, { timeout: 50 })).rejects.toMatchObject({
      name: 'ConnectionError',
      reason: 'timeout',
    });
  });
});

describe('a long Retry-After', () => {
  it('fails at once with the 429 and its retryAfter, instead of blocking', async () => {
    const databasePath = tempDatabase();
    const tight = await createKey(databasePath, ...enterprise(1, 100));
    const other = await server(databasePath);
    try {
      const client = createClient({
        baseUrl: `${other.url}/v1`,
        apiKey: tight,
        retry: { maxRetryDelayMs: 5_000 },
      });
      await client.listPets();
      const started = Date.now();
      const error = (await client.listPets().catch((e: unknown) => e)) as ApiError;
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(error).toBeInstanceOf(ApiError);
      expect(error.code).toBe('rate_limited');
      expect(error.retryAfter).toBeGreaterThan(5);
    } finally {
      await other.stop();
    }
  });
});
