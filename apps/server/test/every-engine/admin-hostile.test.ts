// Hostile input to the admin API, on every backend (this suite is in httpSuites): control characters where
// PostgreSQL cannot store them (U+0000), forged cursors, and fast-check's arbitrary strings and JSON in
// every field and query parameter of createKey, updateKey and listKeys. Each answer must be: never a 5xx,
// the Error shape on every failure, and a refused request changes nothing.
import { adminLimits } from '@animal-store/client/admin';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend } from '../support/backends.js';
import { call, startServer, type TestServer } from '../support/harness.js';

const token = 'h'.repeat(40);
let server: TestServer;
let admin: string;
beforeAll(async () => {
  server = await startServer({ adminTokens: [token], adminPerMinute: 1_000_000 });
  admin = `${server.adminUrl}/admin/v1`;
});
afterAll(async () => {
  server.expectNoContractViolations();
  await server.close();
});

const request = (path: string, init: RequestInit = {}) => call(`${admin}${path}`, token, init);
const send = (method: string, path: string, body: unknown) =>
  request(path, { method, body: JSON.stringify(body) });
/** Every key, in creation order, as the admin API lists them. */
async function allKeys(): Promise<unknown[]> {
  const res = await request('/keys?limit=100');
  expect(res.status).toBe(200);
  return ((await res.json()) as { keys: unknown[] }).keys;
}
/** A failure in the Error shape whose message names `field`. */
async function expectRefused(res: Response, field: string) {
  const body = (await res.json()) as { code: string; message: string; status: number };
  expect({ status: res.status, code: body.code }).toEqual({ status: 400, code: 'invalid_request' });
  expect(body.status).toBe(400);
  expect(body.message).toContain(field);
}
const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe(`U+0000 and control characters in the admin API (${backend})`, () => {
  it.each([
    ['a label', { plan: 'free', label: 'team\u0000a' }, 'body.label'],
    ['a label with another control character', { plan: 'free', label: 'team\u0085a' }, 'body.label'],
    ['a customerId', { plan: 'free', customerId: 'cus\u00004711' }, 'body.customerId'],
  ])('createKey with %s is a 400 naming the field, and creates nothing', async (_, body, field) => {
    const before = await allKeys();
    await expectRefused(await send('POST', '/keys', body), field);
    expect(await allKeys()).toEqual(before);
  });

  it.each([
    ['label', { label: 'a\u0000b' }, 'body.label'],
    ['customerId', { customerId: '\u0000' }, 'body.customerId'],
  ])('updateKey with a %s holding U+0000 is a 400, and the key is unchanged', async (_, body, field) => {
    const created = await send('POST', '/keys', { plan: 'free', label: 'kept', customerId: 'cus_1' });
    expect(created.status).toBe(201);
    const { key } = (await created.json()) as { key: { id: string } };
    await expectRefused(await send('PATCH', `/keys/${key.id}`, body), field);
    const after = (await (await request(`/keys/${key.id}`)).json()) as Record<string, unknown>;
    expect(after).toMatchObject({ label: 'kept', customerId: 'cus_1' });
  });

  it('an empty change is a 400 saying a change names a field, not the validator\'s "fewer than 1 properties"', async () => {
    const created = await send('POST', '/keys', { plan: 'free' });
    const { key } = (await created.json()) as { key: { id: string } };
    const res = await send('PATCH', `/keys/${key.id}`, {});
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toBe('body must name at least one field');
  });

  it.each([
    ['a customerId filter holding U+0000', '/keys?customerId=cus%00', 'query.customerId'],
    ['a cursor holding U+0000', '/keys?cursor=%00', 'query.cursor'],
    ['a cursor in another alphabet', '/keys?cursor=a%2Bb%2F', 'query.cursor'],
    [
      'a forged cursor whose position holds U+0000',
      `/keys?cursor=${forged(['\u0000', 'x'])}`,
      'query.cursor',
    ],
    [
      'a forged cursor with a key id no key has',
      `/keys?cursor=${forged(['2026-11-23T09:00:00.000Z', "x' OR '1'='1"])}`,
      'query.cursor',
    ],
    [
      'a forged cursor with a date that is not an instant',
      `/keys?cursor=${forged(['yesterday', 'abcdef012345'])}`,
      'query.cursor',
    ],
  ])('listKeys with %s is a 400 naming the parameter', async (_, path, field) => {
    await expectRefused(await request(path), field);
  });

  it('a cursor the service made still pages', async () => {
    for (let i = 0; i < 3; i++) expect((await send('POST', '/keys', { plan: 'free' })).status).toBe(201);
    const first = (await (await request('/keys?limit=2')).json()) as { nextCursor: string };
    expect(first.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect((await request(`/keys?limit=2&cursor=${first.nextCursor}`)).status).toBe(200);
  });
});

// The bounds the console's forms check before sending (adminLimits, generated from the admin contract) are
// the ones this server enforces: each edge accepted, one past it a 400 naming the field.
describe(`the admin contract's bounds, as the console reads them (${backend})`, () => {
  const { label, customerId, perMinute, gracePeriodSeconds, search, auditActor, keyId } = adminLimits;
  const enterprise = (limit: number) => ({ plan: 'enterprise', limits: { perMinute: limit, perDay: limit } });
  it.each([
    [
      'label',
      { plan: 'free', label: 'l'.repeat(label.maxLength) },
      { plan: 'free', label: 'l'.repeat(label.maxLength + 1) },
    ],
    [
      'customerId',
      { plan: 'free', customerId: 'c'.repeat(customerId.maxLength) },
      { plan: 'free', customerId: 'c'.repeat(customerId.maxLength + 1) },
    ],
    ['limits', enterprise(perMinute.maximum), enterprise(perMinute.maximum + 1)],
  ])('createKey: a %s at the bound is created, one past it is a 400', async (field, within, past) => {
    expect((await send('POST', '/keys', within)).status).toBe(201);
    await expectRefused(await send('POST', '/keys', past), `body.${field}`);
  });

  it('rotateKey: the longest grace is taken, one second more is a 400', async () => {
    const created = (await (await send('POST', '/keys', { plan: 'free' })).json()) as { key: { id: string } };
    const rotate = (seconds: number) =>
      send('POST', `/keys/${created.key.id}/rotate`, { gracePeriodSeconds: seconds });
    await expectRefused(await rotate(gracePeriodSeconds.maximum + 1), 'body.gracePeriodSeconds');
    expect((await rotate(gracePeriodSeconds.maximum)).status).toBe(200);
  });

  it.each([
    ['/keys', 'q', 's'.repeat(search.maxLength), 's'.repeat(search.maxLength + 1)],
    ['/audit-events', 'actor', 'a'.repeat(auditActor.maxLength), 'a'.repeat(auditActor.maxLength + 1)],
    ['/audit-events', 'keyId', '0'.repeat(keyId.length), '0'.repeat(keyId.length + 1)],
  ])('%s?%s at the bound is answered, one past it is a 400', async (path, name, within, past) => {
    expect((await request(`${path}?${name}=${within}`)).status).toBe(200);
    await expectRefused(await request(`${path}?${name}=${past}`), `query.${name}`);
  });
});

describe(`arbitrary input to the admin API (${backend})`, () => {
  const text = fc.oneof(
    fc.string({ maxLength: 40, unit: 'binary' }),
    fc.constantFrom('', ' ', '\u0000', 'a\u0000', '\ud800', '💳'.repeat(130), 'cus_4711', 'x'.repeat(256)),
  );
  const anyJson = fc.oneof(fc.jsonValue({ maxDepth: 2 }), text, fc.constant(null));
  const plan = fc.oneof(fc.constantFrom('free', 'pro', 'enterprise', 'FREE', ''), anyJson);
  const body = fc.record(
    { plan, label: anyJson, customerId: anyJson, perMinute: anyJson, perDay: anyJson, extra: anyJson },
    { requiredKeys: [] },
  );

  /** Never a 5xx; every failure in the Error shape. */
  async function expectHandled(res: Response, what: string) {
    expect(res.status, what).toBeLessThan(500);
    if (res.status >= 400) {
      const failure = (await res.json()) as Record<string, unknown>;
      expect(failure, what).toEqual({
        code: expect.any(String),
        message: expect.any(String),
        status: res.status,
      });
    }
  }

  it('createKey and updateKey bodies: never a 5xx, the Error shape on every failure', async () => {
    const target = (await (await send('POST', '/keys', { plan: 'free' })).json()) as { key: { id: string } };
    await fc.assert(
      fc.asyncProperty(body, async (generated) => {
        const what = JSON.stringify(generated);
        await expectHandled(await send('POST', '/keys', generated), `createKey ${what}`);
        await expectHandled(await send('PATCH', `/keys/${target.key.id}`, generated), `updateKey ${what}`);
      }),
      { numRuns: 60 },
    );
  });

  it('listKeys query parameters: never a 5xx, the Error shape on every failure', async () => {
    const query = fc.record(
      { limit: text, cursor: text, customerId: text, plan: text, revoked: text },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(query, async (generated) => {
        const search = new URLSearchParams(generated as Record<string, string>).toString();
        await expectHandled(await request(`/keys?${search}`), `listKeys ?${search}`);
      }),
      { numRuns: 60 },
    );
  });
});
