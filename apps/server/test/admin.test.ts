// The admin API (spec/admin/openapi.yaml) against the real app on its own listener, over the project's
// backend: tokens, every operation, validation, idempotent creates, pages and filters, usage, the audit
// trail. The billing scenario across processes is billing.test.ts.

import { readFileSync } from 'node:fs';
import { bundledAdminSpecPath } from '@animal-store/spec/files';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer } from './harness.js';

const token = 'a'.repeat(40);
const nextToken = 'b'.repeat(40);
const adminContract = JSON.parse(readFileSync(bundledAdminSpecPath, 'utf8')) as {
  paths: Record<string, Record<string, { operationId: string }>>;
};
/** Every operation of the admin contract, with a path that names an existing key when it takes one. */
const operations = Object.entries(adminContract.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => method !== 'parameters')
    .map(([method, op]) => ({ operationId: op.operationId, method: method.toUpperCase(), path })),
);

let server: TestServer;
let admin: string;
beforeAll(async () => {
  server = await startServer({
    adminTokens: [token, nextToken],
    limits: { ban: { threshold: 1, seconds: 60 } },
  });
  admin = `${server.adminUrl}/admin/v1`;
});
afterAll(async () => {
  server.expectNoContractViolations();
  await server.close();
});

const as =
  (bearer: string | undefined) =>
  (path: string, init: RequestInit = {}) =>
    call(`${admin}${path}`, bearer, init);
const adminCall = as(token);
const post = (path: string, body?: unknown, headers: Record<string, string> = {}) =>
  adminCall(path, { method: 'POST', headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
const createKey = async (body: Record<string, unknown>) => {
  const res = await post('/keys', body);
  expect(res.status).toBe(201);
  return (await res.json()) as { key: { id: string; plan: string }; secret: string };
};

describe('admin tokens', () => {
  it.each(operations)('$operationId is refused without a token, and with a wrong one', async (op) => {
    const { key } = await createKey({ plan: 'free' });
    const path = op.path.replace('{keyId}', key.id);
    const body = op.method === 'POST' || op.method === 'PATCH' ? JSON.stringify({ plan: 'pro' }) : undefined;
    // Near misses: a prefix (as short as one character), the right length but the last character wrong,
    // a longer string, another case. Any of them accepted would let a caller guess the token piece by piece.
    for (const bearer of [
      undefined,
      'c'.repeat(40),
      `${token}x`,
      token.slice(0, -1),
      token.slice(0, 1),
      `${token.slice(0, -1)}z`,
      token.toUpperCase(),
    ]) {
      const res = await as(bearer)(path, { method: op.method, ...(body && { body }) });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="animal-store-admin"/);
      expect(await res.json()).toEqual({ code: 'unauthorized', message: expect.any(String), status: 401 });
    }
    expect((await adminCall(`/keys/${key.id}`)).status).toBe(200); // nothing changed
    expect(((await (await adminCall(`/keys/${key.id}`)).json()) as { plan: string }).plan).toBe('free');
  });

  it.each(operations)('$operationId is not reachable through the public port', async (op) => {
    const { key, secret } = await createKey({ plan: 'free' });
    const path = `/admin/v1${op.path.replace('{keyId}', key.id)}`;
    const res = await call(`${server.url}${path}`, token, { method: op.method });
    expect(res.status).toBe(404);
    const withKey = await call(`${server.url}${path}`, secret, { method: op.method });
    expect(withKey.status).toBe(404);
  });

  it('accepts both tokens of a rotation, and the audit names each by its fingerprint only', async () => {
    const first = await createKey({ plan: 'free' });
    const second = await as(nextToken)('/keys', { method: 'POST', body: JSON.stringify({ plan: 'pro' }) });
    expect(second.status).toBe(201);
    const audits = server.logs.map((l) => JSON.parse(l)).filter((r) => r.msg === 'admin change');
    const fingerprints = new Set(audits.map((r) => r.adminToken));
    expect(fingerprints.size).toBe(2);
    expect(server.logs.join('\n')).not.toContain(token);
    expect(server.logs.join('\n')).not.toContain(nextToken);
    expect(server.logs.join('\n')).not.toContain(first.secret);
  });

  it('limits each token per minute with 429 and Retry-After', async () => {
    const limited = await startServer({ adminTokens: [token], adminPerMinute: 3 });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await call(`${limited.adminUrl}/admin/v1/keys`, token)).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const res = await call(`${limited.adminUrl}/admin/v1/keys`, token);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await res.json()).toEqual({ code: 'rate_limited', message: expect.any(String), status: 429 });
    } finally {
      await limited.close();
    }
  });
});

describe('createKey', () => {
  it('creates a key whose secret opens the public API, with Location, and shows the secret once', async () => {
    const res = await post('/keys', { plan: 'business', label: 'Acme', customerId: 'cus_1' });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { key: Record<string, unknown>; secret: string };
    expect(res.headers.get('location')).toBe(`/admin/v1/keys/${created.key.id}`);
    expect(created.key).toMatchObject({
      plan: 'business',
      limits: { perMinute: 1000, perDay: 100000 },
      label: 'Acme',
      customerId: 'cus_1',
      revokedAt: null,
    });
    expect((await call(`${server.url}/v1/pets`, created.secret)).status).toBe(200);
    const read = await (await adminCall(`/keys/${created.key.id}`)).json();
    expect(JSON.stringify(read)).not.toContain(created.secret);
  });

  it.each([
    [{ plan: 'enterprise' }, /enterprise keys need limits.perMinute and limits.perDay/],
    [{ plan: 'free', limits: { perMinute: 5, perDay: 10 } }, /apply to enterprise keys only/],
    [{ plan: 'enterprise', limits: { perMinute: 50, perDay: 10 } }, /could never be reached/],
    [{ plan: 'gold' }, /plan/],
    [{ plan: 'free', extra: 1 }, /extra|additional/i],
    [{ plan: 'free', customerId: '' }, /customerId/],
  ])('refuses %j with a 400 that says why, and creates nothing', async (body, message) => {
    const before = (await server.keys.list()).length;
    const res = await post('/keys', body);
    expect(res.status).toBe(400);
    const error = (await res.json()) as { code: string; message: string };
    expect(error.code).toBe('invalid_request');
    expect(error.message).toMatch(message);
    expect((await server.keys.list()).length).toBe(before);
  });

  it('with an Idempotency-Key: a retry (whatever its field order) answers the same key without its secret; another body is a 422', async () => {
    const headers = { 'Idempotency-Key': `create-${Date.now()}` };
    const body = { plan: 'pro', customerId: 'cus_idem' };
    const first = await post('/keys', body, headers);
    expect(first.status).toBe(201);
    const created = (await first.json()) as { key: { id: string } };
    const again = await post('/keys', body, headers);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('location')).toBe(`/admin/v1/keys/${created.key.id}`);
    const replayed = (await again.json()) as Record<string, unknown>;
    expect(replayed.id).toBe(created.key.id);
    expect(replayed).not.toHaveProperty('secret');
    // The same body with its fields in another order (as another JSON encoder writes it) is the same request.
    const reordered = await post('/keys', { customerId: 'cus_idem', plan: 'pro' }, headers);
    expect(reordered.status).toBe(200);
    expect(((await reordered.json()) as { id: string }).id).toBe(created.key.id);
    const other = await post('/keys', { ...body, plan: 'free' }, headers);
    expect(other.status).toBe(422);
    expect(((await other.json()) as { code: string }).code).toBe('idempotency_key_reused');
    const page = (await (await adminCall('/keys?customerId=cus_idem')).json()) as { keys: unknown[] };
    expect(page.keys).toHaveLength(1);
  });

  it('concurrent creates with one Idempotency-Key create one key', async () => {
    const headers = { 'Idempotency-Key': `race-${Date.now()}` };
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => post('/keys', { plan: 'free', customerId: 'cus_race' }, headers)),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    const page = (await (await adminCall('/keys?customerId=cus_race')).json()) as { keys: unknown[] };
    expect(page.keys).toHaveLength(1);
  });
});

describe('listKeys', () => {
  it('pages through the keys in creation order with nextCursor, filtered by plan, customer and revocation', async () => {
    const customerId = `cus_page_${Date.now()}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await createKey({ plan: i % 2 ? 'pro' : 'free', customerId })).key.id);
    }
    await post(`/keys/${ids[4]}/revoke`);
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const query = `customerId=${customerId}&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = (await (await adminCall(`/keys?${query}`)).json()) as {
        keys: { id: string }[];
        nextCursor: string | null;
      };
      expect(page.keys.length).toBeLessThanOrEqual(2);
      seen.push(...page.keys.map((k) => k.id));
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(ids);
    const ofPlan = (await (await adminCall(`/keys?customerId=${customerId}&plan=pro`)).json()) as {
      keys: { id: string }[];
    };
    expect(ofPlan.keys.map((k) => k.id)).toEqual([ids[1], ids[3]]);
    const active = (await (await adminCall(`/keys?customerId=${customerId}&revoked=false`)).json()) as {
      keys: { id: string }[];
    };
    expect(active.keys.map((k) => k.id)).toEqual(ids.slice(0, 4));
    const revoked = (await (await adminCall(`/keys?customerId=${customerId}&revoked=true`)).json()) as {
      keys: { id: string }[];
    };
    expect(revoked.keys.map((k) => k.id)).toEqual([ids[4]]);
  });

  it.each(['cursor=x', 'limit=0', 'limit=101', 'limit=01', 'plan=gold', 'revoked=maybe', 'other=1'])(
    'refuses ?%s with a 400',
    async (query) => {
      const res = await adminCall(`/keys?${query}`);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe('invalid_request');
    },
  );
});

/** A key of one request a minute, banned (the ban threshold is 1): a 200, a 429, then the ban. */
async function bannedKey() {
  const created = await createKey({ plan: 'enterprise', limits: { perMinute: 1, perDay: 100 } });
  const codes: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await call(`${server.url}/v1/pets`, created.secret);
    codes.push(res.status === 200 ? 'ok' : ((await res.json()) as { code: string }).code);
  }
  expect(codes).toEqual(['ok', 'rate_limited', 'temporarily_banned']);
  return created;
}

describe('updateKey, rotateKey, revokeKey, unbanKey', () => {
  it('changes the plan, label and customer; the public API applies the new limits at once', async () => {
    const { key, secret } = await createKey({ plan: 'free', label: 'old' });
    const res = await adminCall(`/keys/${key.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ plan: 'pro', label: null, customerId: 'cus_up' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      plan: 'pro',
      limits: { perMinute: 300, perDay: 10000 },
      label: null,
      customerId: 'cus_up',
    });
    const pets = await call(`${server.url}/v1/pets`, secret);
    expect(pets.headers.get('ratelimit-policy')).toContain('"minute";q=300');
    const audit = server.logs
      .map((l) => JSON.parse(l))
      .find((r) => r.operation === 'updateKey' && r.keyId === key.id);
    expect(audit).toMatchObject({
      audit: true,
      before: { plan: 'free', limits: { perMinute: 60, perDay: 1000 } },
      after: { plan: 'pro', limits: { perMinute: 300, perDay: 10000 } },
    });
  });

  it('moves a key to enterprise only with limits, and keeps its own limits when only the label changes', async () => {
    const { key } = await createKey({ plan: 'free' });
    const patch = (body: unknown) =>
      adminCall(`/keys/${key.id}`, { method: 'PATCH', body: JSON.stringify(body) });
    expect((await patch({ plan: 'enterprise' })).status).toBe(400);
    expect(
      await (await patch({ plan: 'enterprise', limits: { perMinute: 7, perDay: 70 } })).json(),
    ).toMatchObject({
      limits: { perMinute: 7, perDay: 70 },
    });
    expect(await (await patch({ label: 'renamed' })).json()).toMatchObject({
      plan: 'enterprise',
      limits: { perMinute: 7, perDay: 70 },
    });
    expect((await patch({})).status).toBe(400);
  });

  it('rotates with a grace period: both secrets work, then the old one no longer', async () => {
    const { key, secret } = await createKey({ plan: 'free' });
    const res = await post(`/keys/${key.id}/rotate`, { gracePeriodSeconds: 1 });
    expect(res.status).toBe(200);
    const rotated = (await res.json()) as { secret: string; previousSecretValidUntil: string };
    expect(Date.parse(rotated.previousSecretValidUntil)).toBeGreaterThan(Date.now());
    expect((await call(`${server.url}/v1/pets`, secret)).status).toBe(200);
    expect((await call(`${server.url}/v1/pets`, rotated.secret)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_200));
    expect((await call(`${server.url}/v1/pets`, secret)).status).toBe(401);
    expect((await call(`${server.url}/v1/pets`, rotated.secret)).status).toBe(200);
    const now = await post(`/keys/${key.id}/rotate`);
    expect(((await now.json()) as { previousSecretValidUntil: null }).previousSecretValidUntil).toBeNull();
    expect((await call(`${server.url}/v1/pets`, rotated.secret)).status).toBe(401);
  });

  it('revokes (again: the same answer, no second audit record), and a revoked key cannot be changed', async () => {
    const { key, secret } = await createKey({ plan: 'free' });
    const first = await post(`/keys/${key.id}/revoke`);
    expect(first.status).toBe(200);
    const revoked = (await first.json()) as { revokedAt: string };
    expect(revoked.revokedAt).toEqual(expect.any(String));
    expect(await (await post(`/keys/${key.id}/revoke`)).json()).toEqual(revoked);
    const records = server.logs
      .map((l) => JSON.parse(l))
      .filter((r) => r.operation === 'revokeKey' && r.keyId === key.id);
    expect(records).toHaveLength(1);
    expect((await call(`${server.url}/v1/pets`, secret)).status).toBe(401);
    for (const res of [
      await adminCall(`/keys/${key.id}`, { method: 'PATCH', body: JSON.stringify({ plan: 'pro' }) }),
      await post(`/keys/${key.id}/rotate`),
    ]) {
      expect(res.status).toBe(404);
      expect(((await res.json()) as { message: string }).message).toMatch(/revoked/);
    }
  });

  it('a new plan ends a ban earned under the old one: the upgraded key is admitted at once', async () => {
    const { key, secret } = await bannedKey();
    const upgraded = await adminCall(`/keys/${key.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ plan: 'pro' }),
    });
    expect(upgraded.status).toBe(200);
    expect((await call(`${server.url}/v1/pets`, secret)).status).toBe(200);
    const usage = (await (await adminCall(`/keys/${key.id}/usage`)).json()) as { bannedUntil: string | null };
    expect(usage.bannedUntil).toBeNull();
    // A change of label only is not a change of terms: a ban stays.
    const other = await bannedKey();
    await adminCall(`/keys/${other.key.id}`, { method: 'PATCH', body: JSON.stringify({ label: 'renamed' }) });
    const still = await call(`${server.url}/v1/pets`, other.secret);
    expect(((await still.json()) as { code: string }).code).toBe('temporarily_banned');
  });

  it('ends a ban: the key is admitted again', async () => {
    const { key, secret } = await bannedKey();
    const usage = (await (await adminCall(`/keys/${key.id}/usage`)).json()) as { bannedUntil: string | null };
    expect(Date.parse(usage.bannedUntil ?? '')).toBeGreaterThan(Date.now());
    expect((await post(`/keys/${key.id}/unban`)).status).toBe(204);
    const after = (await (await adminCall(`/keys/${key.id}/usage`)).json()) as { bannedUntil: string | null };
    expect(after.bannedUntil).toBeNull();
    await adminCall(`/keys/${key.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ limits: { perMinute: 5, perDay: 100 } }),
    });
    expect((await call(`${server.url}/v1/pets`, secret)).status).toBe(200);
  });

  it.each([
    ['GET', '/keys/000000000000'],
    ['PATCH', '/keys/000000000000'],
    ['POST', '/keys/000000000000/rotate'],
    ['POST', '/keys/000000000000/revoke'],
    ['POST', '/keys/000000000000/unban'],
    ['GET', '/keys/000000000000/usage'],
  ])('%s %s of an unknown key is a 404', async (method, path) => {
    const res = await adminCall(path, { method, ...(method === 'PATCH' && { body: '{"plan":"pro"}' }) });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 'not_found', message: expect.any(String), status: 404 });
  });

  it('refuses a malformed key id with a 400', async () => {
    const res = await adminCall('/keys/not-a-key');
    expect(res.status).toBe(400);
  });
});

describe('getKeyUsage', () => {
  it('counts admitted, limited and banned requests per day, and shows the running windows', async () => {
    const { key, secret } = await createKey({ plan: 'enterprise', limits: { perMinute: 3, perDay: 100 } });
    const outcomes = { admitted: 0, limited: 0, banned: 0 };
    for (let i = 0; i < 7; i++) {
      const res = await call(`${server.url}/v1/pets`, secret);
      if (res.status === 200) outcomes.admitted++;
      else
        outcomes[((await res.json()) as { code: string }).code === 'rate_limited' ? 'limited' : 'banned']++;
    }
    expect(outcomes.admitted).toBe(3);
    const today = new Date().toISOString().slice(0, 10);
    const read = async () =>
      (await (await adminCall(`/keys/${key.id}/usage`)).json()) as Record<string, unknown>;
    // Before the meter writes, the answer already has this process's counts; after, the store's: equal.
    const before = await read();
    await server.meter.flush();
    const after = await read();
    for (const usage of [before, after]) {
      expect(usage.days).toEqual([{ date: today, ...outcomes }]);
      expect(usage.windows).toEqual([
        { name: 'minute', limit: 3, used: 3, reserved: 0, remaining: 0, resetAt: expect.any(String) },
        // The day lease was 12 points (an eighth of the limit): 3 admitted, 9 reserved.
        { name: 'day', limit: 100, used: 3, reserved: 9, remaining: 97, resetAt: expect.any(String) },
      ]);
    }
    const [row] = await server.sql<{ admitted: number }>(
      'SELECT admitted FROM key_usage WHERE key_id = ?',
      key.id,
    );
    expect(Number(row?.admitted)).toBe(3);
  });

  it('answers no days and idle windows for a key never used, and refuses a bad range', async () => {
    const { key } = await createKey({ plan: 'free' });
    const usage = await (await adminCall(`/keys/${key.id}/usage?from=2026-01-01&to=2026-01-31`)).json();
    expect(usage).toMatchObject({
      days: [],
      bannedUntil: null,
      windows: [
        { name: 'minute', limit: 60, used: 0, reserved: 0, remaining: 60, resetAt: null },
        { name: 'day', limit: 1000, used: 0, reserved: 0, remaining: 1000, resetAt: null },
      ],
    });
    for (const query of [
      'from=2026-02-01&to=2026-01-01',
      'from=2020-01-01&to=2026-01-01',
      'from=2026-13-01',
      'from=2026-02-30', // no such day: not read as 2 March
      'to=2026-04-31',
    ]) {
      const res = await adminCall(`/keys/${key.id}/usage?${query}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'invalid_request', status: 400 });
    }
  });
});

describe('the admin listener', () => {
  it('serves its own contract at /openapi.json and a docs page at /docs, and counts changes in /metrics', async () => {
    const contract = (await (await fetch(`${server.adminUrl}/openapi.json`)).json()) as {
      info: { title: string };
    };
    expect(contract.info.title).toBe('Animal Store Admin');
    const docs = await fetch(`${server.adminUrl}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('Animal Store admin API reference');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/animal_store_admin_changes_total\{operation="createKey"\} [1-9]/);
    // the public port serves the public contract, not the admin one
    const publicContract = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      info: { title: string };
    };
    expect(publicContract.info.title).toBe('Animal Store');
  });
});

describe('a base URL without /admin/v1', () => {
  it('answers 404 saying where the admin API is, and what the request would have been there', async () => {
    const res = await call(`${server.adminUrl}/keys`, token);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      code: 'not_found',
      message: 'No route GET /keys. The API is under /admin/v1: GET /admin/v1/keys.',
      status: 404,
    });
    // Under the base path, an unknown route is a plain 404, with no hint.
    const inside = await adminCall('/nothing');
    expect(inside.status).toBe(404);
    expect(((await inside.json()) as { message: string }).message).not.toContain('The API is under');
  });
});
