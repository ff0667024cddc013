// The id filter (getPet's successor), Location on 201, and Idempotency-Key on createPet (added in interface 1.1.0).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyDigest } from '../../src/http/body-digest.js';
import { IdempotencyClaimLostError } from '../../src/store/unavailable.js';
import {
  backend,
  call,
  parseRaw,
  rawRequest,
  startServer,
  type TestServer,
  tokenParts,
} from '../support/harness.js';

let server: TestServer;
let key: string;
const create = (body: unknown, headers: Record<string, string> = {}, as = key) =>
  call(`${server.url}/v1/pets`, as, { method: 'POST', body: JSON.stringify(body), headers });
const list = (query: string, as = key) => call(`${server.url}/v1/pets${query}`, as);

beforeAll(async () => {
  server = await startServer();
  key = await server.key({ perMinute: 100_000, perDay: 1_000_000 });
});
afterAll(async () => {
  server.expectNoContractViolations();
  await server.close();
});

/** `res` refuses with `status` and `code` in the Error shape, and the store still holds `before` pets. */
async function expectRefused(res: Response, status: number, code: string, before: number) {
  expect(res.status).toBe(status);
  expect(await res.json()).toEqual({ code, message: expect.any(String), status });
  expect(await server.petCount()).toBe(before);
}

describe('GET /pets?id=...', () => {
  it('returns exactly the named pets that exist, in id order, once each, optionally of one status', async () => {
    const a = await (await create({ name: 'A', categoryId: 1 })).json();
    const b = await (await create({ name: 'B', categoryId: 1, status: 'sold' })).json();
    const res = await list(`?id=${b.id}&id=${a.id}&id=${b.id}&id=999999999`);
    expect(res.status).toBe(200);
    expect(res.headers.get('link')).toBeNull();
    expect(await res.json()).toEqual([a, b]);
    expect(await (await list(`?id=${a.id}&id=${b.id}&status=sold`)).json()).toEqual([b]);
    expect(await (await list('?id=999999998')).json()).toEqual([]);
  });

  it.each([
    ['id=abc', /query\.id/],
    ['id=0', /query\.id/],
    ['id=01', /query\.id/],
    ['id=9223372036854775808', /query\.id/],
    ['id=1&limit=5', /query\.limit cannot be combined with query\.id/],
    ['id=1&cursor=abc', /query\.cursor cannot be combined with query\.id/],
    [Array.from({ length: 101 }, (_, i) => `id=${i + 1}`).join('&'), /query\.id/],
  ])('when %s, then 400 names the parameter', async (query, message) => {
    const res = await list(`?${query}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: 'invalid_request',
      message: expect.stringMatching(message),
      status: 400,
    });
  });
});

describe('successor and Location', () => {
  it('201 carries Location, and following it returns the pet', async () => {
    const res = await create({ name: 'Located', categoryId: 3 });
    const pet = await res.json();
    expect(res.headers.get('location')).toBe(`/v1/pets?id=${pet.id}`);
    expect(await (await call(`${server.url}${res.headers.get('location')}`, key)).json()).toEqual([pet]);
  });

  it("getPet's successor Link is the exact replacement, and following it returns the same pet", async () => {
    const pet = await (await create({ name: 'Old', categoryId: 3 })).json();
    const res = await call(`${server.url}/v1/pets/${pet.id}`, key);
    const successor = /<([^>]+)>; rel="successor-version"/.exec(res.headers.get('link') ?? '')?.[1];
    expect(successor).toBe(`/v1/pets?id=${pet.id}`);
    expect(await (await call(`${server.url}${successor}`, key)).json()).toEqual([await res.json()]);
  });
});

describe('Idempotency-Key on POST /pets', () => {
  it('replays the original response for the same key and body, adding nothing', async () => {
    const before = await server.petCount();
    const headers = { 'idempotency-key': 'order-1' };
    const first = await create({ name: 'Once', categoryId: 1 }, headers);
    const again = await create({ categoryId: 1, name: 'Once' }, headers); // same body, other key order
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(await again.json()).toEqual(await first.json());
    expect(await server.petCount()).toBe(before + 1);
  });

  it('refuses the same key with a different body: 422, nothing added', async () => {
    const headers = { 'idempotency-key': 'order-2' };
    await create({ name: 'First', categoryId: 1 }, headers);
    const before = await server.petCount();
    await expectRefused(
      await create({ name: 'Second', categoryId: 1 }, headers),
      422,
      'idempotency_key_reused',
      before,
    );
  });

  it('creates exactly one pet from 20 concurrent requests with one key', async () => {
    const before = await server.petCount();
    const headers = { 'idempotency-key': 'race-1' };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => create({ name: 'Racer', categoryId: 1 }, headers)),
    );
    const statuses = answers.map((r) => r.status);
    expect(await server.petCount()).toBe(before + 1);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const created = await Promise.all(answers.filter((r) => r.status === 201).map((r) => r.json()));
    expect(new Set(created.map((p) => p.id)).size).toBe(1);
    for (const r of answers.filter((a) => a.status === 409)) {
      expect((await r.json()).code).toBe('idempotency_in_progress');
    }
  });

  it('answers 409 with Retry-After: 1 while the first request with the key is still in progress, adding nothing', async () => {
    // The first request's claim, made as the idempotency layer makes it: the HTTP request below then
    // finds the key claimed and no pet yet, on every engine (no race needed).
    const body = { name: 'Slow', categoryId: 1 };
    await server.store.idempotency.claim(
      { apiKeyId: tokenParts(key).id, key: 'in-flight', token: 'first' },
      bodyDigest(body),
      {
        now: Date.now(),
        expireBefore: 0,
        abandonBefore: 0,
      },
    );
    const before = await server.petCount();
    const answer = await create(body, { 'idempotency-key': 'in-flight' });
    expect(answer.headers.get('retry-after')).toBe('1');
    await expectRefused(answer, 409, 'idempotency_in_progress', before);
  });

  it('fences a claim by its token: once taken over, the first request commits no pet and cannot give the key back; the new holder can', async () => {
    const { idempotency, pets } = server.store;
    const scope = { apiKeyId: tokenParts(key).id, key: 'taken-over' };
    const [first, second] = [
      { ...scope, token: 'first' },
      { ...scope, token: 'second' },
    ];
    const now = Date.now();
    expect(
      await idempotency.claim(first, 'digest', { now, expireBefore: 0, abandonBefore: 0 }),
    ).toBeUndefined();
    // The first request went silent: its claim is abandoned and the second takes it over.
    expect(
      await idempotency.claim(second, 'digest', { now, expireBefore: 0, abandonBefore: now + 1 }),
    ).toBeUndefined();
    const before = await server.petCount();
    const pet = { name: 'Fenced', categoryId: 1, status: 'available' as const };
    await expect(pets.create(pet, () => {}, first)).rejects.toThrow(IdempotencyClaimLostError);
    expect(await server.petCount()).toBe(before);
    await idempotency.release(first); // not the first's any more: the second's claim stays
    const later = { now, expireBefore: 0, abandonBefore: 0 };
    expect(await idempotency.claim({ ...scope, token: 'third' }, 'digest', later)).toEqual({
      fingerprint: 'digest',
    });
    const created = await pets.create(pet, () => {}, second);
    expect(await idempotency.claim({ ...scope, token: 'third' }, 'digest', later)).toEqual({
      fingerprint: 'digest',
      pet: created,
    });
    expect(await server.petCount()).toBe(before + 1);
  });

  it('records the key in the transaction that creates the pet: when recording fails, no pet is stored', async () => {
    // A trigger makes the store's write of the key's record fail, after the pet's insert.
    const postgres = backend !== 'sqlite';
    if (postgres) {
      await server.sql(
        "CREATE FUNCTION refuse_record() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'injected'; END $$ LANGUAGE plpgsql",
      );
      await server.sql(
        'CREATE TRIGGER refuse_record BEFORE UPDATE ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION refuse_record()',
      );
    } else {
      await server.sql(
        "CREATE TRIGGER refuse_record BEFORE UPDATE ON idempotency_keys BEGIN SELECT RAISE(ABORT, 'injected'); END",
      );
    }
    const headers = { 'idempotency-key': 'crash-between' };
    const before = await server.petCount();
    try {
      expect((await create({ name: 'Once', categoryId: 1 }, headers)).status).toBe(500);
      expect(await server.petCount()).toBe(before);
    } finally {
      await server.sql(
        postgres ? 'DROP TRIGGER refuse_record ON idempotency_keys' : 'DROP TRIGGER refuse_record',
      );
    }
    const retried = await create({ name: 'Once', categoryId: 1 }, headers);
    expect(retried.status).toBe(201);
    expect(await server.petCount()).toBe(before + 1);
    const replayed = await create({ name: 'Once', categoryId: 1 }, headers);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(await server.petCount()).toBe(before + 1);
  });

  it('scopes keys per API key', async () => {
    const other = await server.key({ perMinute: 100, perDay: 1000 });
    const headers = { 'idempotency-key': 'shared-name' };
    const mine = await (await create({ name: 'Mine', categoryId: 1 }, headers)).json();
    const theirs = await (await create({ name: 'Mine', categoryId: 1 }, headers, other)).json();
    expect(theirs.id).not.toBe(mine.id);
  });

  it('forgets a key after 24 hours', async () => {
    const headers = { 'idempotency-key': 'old-order' };
    const old = await (await create({ name: 'Yesterday', categoryId: 1 }, headers)).json();
    await server.sql(
      'UPDATE idempotency_keys SET created_at = ? WHERE key = ?',
      Date.now() - 24 * 3_600_000 - 1,
      'old-order',
    );
    const res = await create({ name: 'Today', categoryId: 1 }, headers);
    expect(res.status).toBe(201);
    expect((await res.json()).id).not.toBe(old.id);
  });

  it('counts replays against the rate limit like any request', async () => {
    const small = await server.key({ perMinute: 3, perDay: 100 });
    const headers = { 'idempotency-key': 'counted' };
    const remaining = [];
    for (let i = 0; i < 3; i++) {
      remaining.push(
        (await create({ name: 'Counted', categoryId: 1 }, headers, small)).headers.get(
          'x-ratelimit-remaining',
        ),
      );
    }
    expect(remaining).toEqual(['2', '1', '0']);
    expect((await create({ name: 'Counted', categoryId: 1 }, headers, small)).status).toBe(429);
  });

  it('gives the key back when the request created nothing', async () => {
    const headers = { 'idempotency-key': 'retry-after-400' };
    expect((await create({ name: '', categoryId: 1 }, headers)).status).toBe(400);
    expect((await create({ name: 'Valid', categoryId: 1 }, headers)).status).toBe(201);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a non-ASCII character', 'cl\u00e9'],
    ['a tab', 'a\tb'],
  ])('when the key is %s, then 400 names the header and nothing is added', async (_, value) => {
    const before = await server.petCount();
    const body = JSON.stringify({ name: 'Rex', categoryId: 1 });
    const { text } = await rawRequest(
      server.url,
      Buffer.from(
        `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\nIdempotency-Key: ${value}\r\nConnection: close\r\n\r\n${body}`,
      ),
    );
    const res = parseRaw(text);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'invalid_request',
      message: expect.stringMatching(/idempotency-key/i),
      status: 400,
    });
    expect(await server.petCount()).toBe(before);
  });
});

// Last: an explicit id of 2^53 moves SQLite's AUTOINCREMENT sequence past what JSON numbers carry exactly.
describe('GET /pets?id=... beyond 2^53', () => {
  it('matches ids beyond 2^53 exactly', async () => {
    await server.sql(
      "INSERT INTO pets (id, name, category_id, status) VALUES (9007199254740992, 'Big', 1, 'sold')",
    );
    try {
      expect(await (await list('?id=9007199254740993')).json()).toEqual([]);
      expect(
        (await (await list('?id=9007199254740992')).json()).map((p: { name: string }) => p.name),
      ).toEqual(['Big']);
    } finally {
      await server.sql('DELETE FROM pets WHERE id = 9007199254740992');
    }
  });
});
