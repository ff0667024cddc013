import { describe, expect, it } from 'vitest';
import { call, type TestServer, withServer } from '../support/harness.js';

let server: TestServer;
let key: string;
const pets = (query = '') => call(`${server.url}/v1/pets${query}`, key);
const create = (body: unknown) =>
  call(`${server.url}/v1/pets`, key, { method: 'POST', body: JSON.stringify(body) });
const count = () => server.petCount();

withServer((started, generous) => {
  server = started;
  key = generous;
});

describe('POST /pets', () => {
  it('when a valid NewPet is sent, then it answers 201 with the Pet and its assigned id', async () => {
    const res = await create({ name: 'Rex', categoryId: 1, status: 'pending' });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const pet = await res.json();
    expect(pet).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 1, status: 'pending' });
  });

  it('when status is omitted, then the pet is available', async () => {
    const pet = await (await create({ name: 'Tom', categoryId: 2 })).json();
    expect(pet.status).toBe('available');
  });

  it('assigns increasing ids', async () => {
    const a = await (await create({ name: 'A', categoryId: 1 })).json();
    const b = await (await create({ name: 'B', categoryId: 1 })).json();
    expect(b.id).toBeGreaterThan(a.id);
  });

  it.each([
    ['name missing', { categoryId: 1 }, /body\.name must have required property 'name'/],
    ['categoryId missing', { name: 'Rex' }, /body\.categoryId must have required property 'categoryId'/],
    ['empty name', { name: '', categoryId: 1 }, /body\.name/],
    [
      'name of 101 characters',
      { name: 'x'.repeat(101), categoryId: 1 },
      /body\.name must NOT have more than 100/,
    ],
    ['name with leading space', { name: ' Rex', categoryId: 1 }, /body\.name must match pattern/],
    ['name with a control character', { name: 'R\u0007x', categoryId: 1 }, /body\.name must match pattern/],
    ['name not a string', { name: 7, categoryId: 1 }, /body\.name must be string/],
    ['categoryId not an integer', { name: 'Rex', categoryId: 1.5 }, /body\.categoryId must be integer/],
    ['categoryId zero', { name: 'Rex', categoryId: 0 }, /body\.categoryId must be >= 1/],
    [
      'categoryId of 2^53 (not exactly representable)',
      { name: 'Rex', categoryId: 2 ** 53 },
      /body\.categoryId must be <=/,
    ],
    [
      'unknown status',
      { name: 'Rex', categoryId: 1, status: 'lost' },
      /body\.status must be equal to one of/,
    ],
    ['unknown field', { name: 'Rex', categoryId: 1, id: 5 }, /body\.id must NOT have additional properties/],
    ['an array', [], /body must be object/],
  ])('when %s, then 400 names the field and nothing is stored', async (_, body, message) => {
    const before = await count();
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: 'invalid_request',
      message: expect.stringMatching(message),
      status: 400,
    });
    expect(await count()).toBe(before);
  });

  it('accepts a name of exactly 100 characters and non-ASCII names', async () => {
    expect((await create({ name: 'x'.repeat(100), categoryId: 1 })).status).toBe(201);
    expect((await create({ name: 'Füchschen 🦊', categoryId: 9007199254740991 })).status).toBe(201);
  });

  it('when the body is malformed JSON, then 400 and nothing is stored', async () => {
    const before = await count();
    const res = await call(`${server.url}/v1/pets`, key, { method: 'POST', body: '{"name":' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: 'invalid_request',
      message: 'The request body is not valid JSON.',
      status: 400,
    });
    expect(await count()).toBe(before);
  });

  it('when the body is not JSON, then 415', async () => {
    const res = await call(`${server.url}/v1/pets`, key, {
      method: 'POST',
      body: 'name=Rex',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expect((await res.json()).code).toBe('unsupported_media_type');
  });

  it('when the body is over 16 KiB, then 413 and nothing is stored', async () => {
    const before = await count();
    const res = await create({ name: 'x'.repeat(17 * 1024), categoryId: 1 });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ code: 'payload_too_large', message: expect.any(String), status: 413 });
    expect(await count()).toBe(before);
  });
});

describe('GET /pets', () => {
  it('answers a JSON array of Pets in ascending id order, at most 20 by default', async () => {
    for (let i = 0; i < 25; i++)
      await create({ name: `Pet ${i}`, categoryId: 3, status: i % 2 ? 'sold' : 'available' });
    const res = await pets();
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: number }[];
    expect(body).toHaveLength(20);
    expect(body.map((p) => p.id)).toEqual([...body.map((p) => p.id)].sort((a, b) => a - b));
  });

  it.each([1, 5, 100])('when limit=%i, then at most that many', async (limit) => {
    const body = await (await pets(`?limit=${limit}`)).json();
    expect(body.length).toBe(Math.min(limit, await count()));
  });

  it.each(['available', 'pending', 'sold'])('when status=%s, then only those pets', async (status) => {
    const body = (await (await pets(`?status=${status}&limit=100`)).json()) as { status: string }[];
    expect(body.length).toBeGreaterThan(0);
    expect(body.every((p) => p.status === status)).toBe(true);
  });

  it.each([
    ['limit=0', /query\.limit must be >= 1/],
    ['limit=101', /query\.limit must be <= 100/],
    ['limit=ten', /query\.limit must be integer/],
    ['status=lost', /query\.status must be equal to one of/],
    ['colour=red', /Unknown query parameter 'colour'/],
  ])('when %s, then 400 names the parameter', async (query, message) => {
    const res = await pets(`?${query}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: 'invalid_request',
      message: expect.stringMatching(message),
      status: 400,
    });
  });
});

describe('GET /pets/{petId}', () => {
  it('when the pet exists, then 200 with the Pet', async () => {
    const created = await (await create({ name: 'Fetch', categoryId: 4 })).json();
    const res = await call(`${server.url}/v1/pets/${created.id}`, key);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(created);
  });

  it.each([
    '999999',
    '9007199254740993', // 2^53 + 1: must not be rounded onto another id
    '9223372036854775807', // int64 max
  ])('when no pet has id %s, then 404', async (id) => {
    const res = await call(`${server.url}/v1/pets/${id}`, key);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 'not_found', message: `Pet ${id} was not found.`, status: 404 });
  });

  it('when the id is 2^53 + 1 and pet 2^53 exists, then 404, not that pet', async () => {
    await server.sql(
      "INSERT INTO pets (id, name, category_id, status) VALUES (9007199254740992, 'Big', 1, 'sold')",
    );
    expect((await call(`${server.url}/v1/pets/9007199254740992`, key)).status).toBe(200);
    expect((await call(`${server.url}/v1/pets/9007199254740993`, key)).status).toBe(404);
    await server.sql('DELETE FROM pets WHERE id = 9007199254740992');
  });

  it.each(['abc', '1.5', '0', '-1', '9223372036854775808', '99999999999999999999'])(
    'when the id is %s, then 400',
    async (id) => {
      const res = await call(`${server.url}/v1/pets/${id}`, key);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        code: 'invalid_request',
        message: expect.stringMatching(/path\.petId/),
        status: 400,
      });
    },
  );
});

describe('POST /pets with integers JSON cannot carry exactly', () => {
  it('when categoryId is 9007199254740993 in the raw text, then 400 rather than a rounded id', async () => {
    const res = await call(`${server.url}/v1/pets`, key, {
      method: 'POST',
      body: '{"name":"Rex","categoryId":9007199254740993}',
    });
    expect(res.status).toBe(400);
    expect((await res.json()).message).toMatch(/body\.categoryId must be <= 9007199254740991/);
  });
});

describe('GET /pets/{petId} deprecation', () => {
  it.each([
    ['200', () => '1'],
    ['404', () => '999999'],
    ['400', () => 'abc'],
  ])('when answered %s, then Deprecation, Sunset and the successor Link are sent', async (_, id) => {
    const res = await call(`${server.url}/v1/pets/${id()}`, key);
    expect(res.headers.get('deprecation')).toBe('@1795305600'); // 2026-11-22T00:00:00Z, RFC 9745
    expect(res.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
    expect(res.headers.get('link')).toBe(`</v1/pets?id=${id()}>; rel="successor-version"`); // the exact successor
  });

  it('is not announced on the other operations', async () => {
    const res = await pets();
    expect(res.headers.get('deprecation')).toBeNull();
    expect(res.headers.get('sunset')).toBeNull();
  });
});
