import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyCacheMs } from '../../src/store/key-cache.js';
import { call, startServer, type TestServer, tokenParts } from '../support/harness.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  server.expectNoContractViolations();
  await server.close();
});

const noToken = 'Bearer realm="animal-store"';
const badToken = /^Bearer realm="animal-store", error="invalid_token"/;

describe('authentication on every operation', () => {
  const operations: [string, string, RequestInit][] = [
    ['listPets', '/v1/pets', {}],
    ['createPet', '/v1/pets', { method: 'POST', body: JSON.stringify({ name: 'Rex', categoryId: 1 }) }],
    ['getPet', '/v1/pets/1', {}],
  ];
  const credentials: [string, Record<string, string>, string | RegExp][] = [
    ['no Authorization header', {}, noToken],
    ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }, noToken],
    ['an empty bearer token', { authorization: 'Bearer ' }, badToken],
    ['a malformed token', { authorization: 'Bearer not a token' }, badToken],
    ['an unknown key', { authorization: `Bearer as_000000000000_${'A'.repeat(43)}` }, badToken],
  ];
  const cases = operations.flatMap(([op, path, init]) =>
    credentials.map(([what, headers, challenge]) => ({ op, path, init, what, headers, challenge })),
  );

  it.each(cases)(
    '$op with $what: 401, the Error body and WWW-Authenticate',
    async ({ path, init, headers, challenge }) => {
      const before = await server.petCount();
      const res = await fetch(`${server.url}${path}`, {
        ...init,
        headers: { 'content-type': 'application/json', ...headers },
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(challenge);
      expect(await res.json()).toEqual({ code: 'unauthorized', message: expect.any(String), status: 401 });
      expect(await server.petCount()).toBe(before);
    },
  );

  it('when a key has the right id but a wrong secret, then 401', async () => {
    const key = await server.key();
    const forged = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
    expect((await call(`${server.url}/v1/pets`, forged)).status).toBe(401);
    expect((await call(`${server.url}/v1/pets`, key)).status).toBe(200);
  });

  it('when a key is revoked, then it is refused from the next request on', async () => {
    const key = await server.key();
    expect((await call(`${server.url}/v1/pets`, key)).status).toBe(200);
    const id = tokenParts(key).id;
    expect(await server.keys.revoke(id)).toBe(true);
    const res = await call(`${server.url}/v1/pets`, key);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(badToken);
  });

  it('stores only a hash of the secret', async () => {
    const key = await server.key();
    const secret = tokenParts(key).secret;
    const rows = await server.sql('SELECT * FROM api_keys');
    expect(JSON.stringify(rows)).not.toContain(secret);
  });

  it('never logs the Authorization header or a key', async () => {
    const key = await server.key();
    await call(`${server.url}/v1/pets`, key);
    await call(`${server.url}/v1/pets`, 'as_000000000000_wrongwrongwrong');
    const logs = server.logs.join('');
    expect(logs).toContain('request completed');
    expect(logs).not.toContain(key);
    expect(logs).not.toMatch(/authorization|wrongwrong/i);
  });
});

describe('key rotation and last use (every engine)', () => {
  it('a rotated key answers with its new secret; the old one only within the grace period', async () => {
    const old = await server.key();
    const id = tokenParts(old).id;
    const graced = (await server.keys.rotate(id, 600))?.key as string;
    expect((await call(`${server.url}/v1/pets`, graced)).status).toBe(200);
    expect((await call(`${server.url}/v1/pets`, old)).status).toBe(200);
    const fresh = (await server.keys.rotate(id, 0))?.key as string;
    expect((await call(`${server.url}/v1/pets`, fresh)).status).toBe(200);
    expect((await call(`${server.url}/v1/pets`, graced)).status).toBe(401);
    expect((await call(`${server.url}/v1/pets`, old)).status).toBe(401);
    expect(await server.keys.rotate('000000000000', 0)).toBeUndefined();
    // The last use is written in the background (it never holds a request up): seen within a moment.
    const listed = async () => (await server.keys.list()).find((k) => k.id === id);
    await expect
      .poll(listed, { timeout: 2_000, interval: 50 })
      .toMatchObject({ lastUsedAt: expect.any(String) });
  });
});

describe('the grace period of a rotation', () => {
  it('ends: the previous secret is refused once it has run out, the new one still works', async () => {
    const old = await server.key();
    const fresh = (await server.keys.rotate(tokenParts(old).id, 1))?.key as string;
    expect((await call(`${server.url}/v1/pets`, old)).status).toBe(200);
    const status = async () => (await call(`${server.url}/v1/pets`, old)).status;
    await expect.poll(status, { timeout: 1_200 }).toBe(401);
    expect((await call(`${server.url}/v1/pets`, fresh)).status).toBe(200);
  });
});

/**
 * The status of a request of `key` sent once the cache entry made by the answer at `cachedBy` (epoch ms, read
 * when that answer arrived: the entry was made before) has expired: keyCacheMs later, and 50 ms for the
 * timers. Load cannot make it early or late: the bound is the server's clock from the entry, not a poll's.
 */
async function statusPastTheBound(key: string, cachedBy: number): Promise<number> {
  await new Promise((r) => setTimeout(r, Math.max(0, cachedBy + keyCacheMs + 50 - Date.now())));
  return (await call(`${server.url}/v1/pets`, key)).status;
}

describe('verified keys are remembered for 5 s (every engine)', () => {
  it('a key revoked behind this process (another instance, the keys command) is refused within 5 s', async () => {
    const key = await server.key();
    expect((await call(`${server.url}/v1/pets`, key)).status).toBe(200);
    const cachedBy = Date.now();
    await server.sql(
      'UPDATE api_keys SET revoked_at = ? WHERE id = ?',
      new Date().toISOString(),
      tokenParts(key).id,
    );
    expect((await call(`${server.url}/v1/pets`, key)).status).toBe(200); // from memory: no store read
    expect(await statusPastTheBound(key, cachedBy)).toBe(401);
  });

  it('a token that opens no key is remembered as refused: no store read for it until 5 s have passed', async () => {
    const key = await server.key();
    const { id } = tokenParts(key);
    await server.sql('UPDATE api_keys SET revoked_at = ? WHERE id = ?', new Date().toISOString(), id);
    expect((await call(`${server.url}/v1/pets`, key)).status).toBe(401);
    const cachedBy = Date.now();
    await server.sql('UPDATE api_keys SET revoked_at = NULL WHERE id = ?', id);
    expect((await call(`${server.url}/v1/pets`, key)).status).toBe(401); // from memory
    expect(await statusPastTheBound(key, cachedBy)).toBe(200);
  });
});

describe('enterprise quotas', () => {
  it('beyond 2^31 requests are stored and applied exactly', async () => {
    const big = await server.key({ perMinute: 3_000_000_000, perDay: 1_000_000_000_000 });
    const res = await call(`${server.url}/v1/pets`, big);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('3000000000');
    expect(res.headers.get('ratelimit-policy')).toBe(
      '"minute";q=3000000000;w=60, "day";q=1000000000000;w=86400',
    );
  });
});
