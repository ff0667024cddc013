// The admin contract (spec/admin/openapi.yaml) through Prism, as the public one: the typed admin client
// against `prism mock` of it, and the real server's admin listener behind `prism proxy --errors`, which
// checks every answer of a scenario that drives every admin operation.
import { ApiError, createAdminClient } from '@animal-store/client/admin';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts, prismMock, prismProxy, type Running, server, tempDatabase } from './processes.js';

const token = 'contract-tests-admin-token-0123456789abcdef';

describe('the admin client against prism mock', () => {
  let mock: Running;
  beforeAll(async () => {
    mock = await prismMock(contracts.admin);
  });
  afterAll(() => mock.stop());

  const client = (prefer?: string, waits: number[] = []) =>
    createAdminClient({
      baseUrl: mock.url,
      token,
      headers: prefer ? { Prefer: prefer } : {},
      retry: { sleep: async (ms) => void waits.push(ms), random: () => 0.5 },
    });

  it('answers every operation with the contract examples', async () => {
    const admin = client();
    // Prism answers the lowest 2xx (createKey's 200, a replay) unless told otherwise.
    const created = await client('code=201').createKey({ plan: 'free', customerId: 'cus_4711' });
    expect(created).toMatchObject({ replayed: false, key: { id: '3f2a9c0b1d4e', plan: 'free' } });
    expect(created.replayed || created.secret).toMatch(/^as_3f2a9c0b1d4e_/);
    expect((await admin.listKeys({ plan: 'pro', limit: 10 })).keys[0]?.customerId).toBe('cus_4711');
    const keys = [];
    for await (const key of admin.listAllKeys()) keys.push(key.id);
    expect(keys).toEqual(['3f2a9c0b1d4e']);
    expect((await admin.getKey('3f2a9c0b1d4e')).plan).toBe('pro');
    expect((await admin.updateKey('3f2a9c0b1d4e', { plan: 'pro' })).limits.perMinute).toBe(300);
    expect((await admin.rotateKey('3f2a9c0b1d4e', { gracePeriodSeconds: 60 })).secret).toMatch(/^as_/);
    expect((await admin.revokeKey('3f2a9c0b1d4e')).id).toBe('3f2a9c0b1d4e');
    await expect(admin.unbanKey('3f2a9c0b1d4e')).resolves.toBeUndefined();
    // reset as the contract serializes it (reset=minute,day), checked by Prism against the contract.
    await expect(admin.unbanKey('3f2a9c0b1d4e', { reset: ['minute', 'day'] })).resolves.toBeUndefined();
    expect((await admin.getKeyUsage('3f2a9c0b1d4e', { from: '2026-11-01' })).days[0]?.admitted).toBe(873);
    const trail = await admin.listAuditEvents({ keyId: '3f2a9c0b1d4e', actor: 'billing' });
    expect(trail.events[0]).toMatchObject({ operation: 'updateKey', actor: { name: 'billing' } });
  });

  it('a replayed create is told apart from a new key (no secret)', async () => {
    const replayed = await client('code=200').createKey({ plan: 'free' }, { idempotencyKey: 'order-1' });
    expect(replayed).toEqual({ replayed: true, key: expect.objectContaining({ id: '3f2a9c0b1d4e' }) });
  });

  it.each([
    ['code=404', 404, 'not_found'],
    ['code=400', 400, 'invalid_request'],
    ['code=401', 401, 'unauthorized'],
  ])('Prefer %s: a typed ApiError, not retried', async (prefer, status, code) => {
    const error = await client(prefer)
      .getKey('3f2a9c0b1d4e')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status, code });
  });

  it('429: retried after Retry-After, then the ApiError with retryAfter', async () => {
    const waits: number[] = [];
    const error = await client('code=429', waits)
      .listKeys()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 17 });
    expect(waits).toEqual([]); // Retry-After 17 s is above the longest single wait (10 s): no blocking
  });
});

describe("the server's admin listener behind prism proxy", () => {
  let upstream: Running;
  let proxy: Running;
  beforeAll(async () => {
    upstream = await server(tempDatabase(), {
      ADMIN_PORT: '0',
      ADMIN_TOKENS: `billing:${token}`,
      RATE_LIMIT_BAN_THRESHOLD: '1',
    });
    proxy = await prismProxy(`${upstream.adminUrl}/admin/v1`, contracts.admin);
  });
  afterAll(async () => {
    await proxy?.stop();
    await upstream?.stop();
  });

  it('answers every admin operation within the admin contract', async () => {
    const results: { step: string; status: number; violations: string | null }[] = [];
    const send = async (step: string, path: string, init: RequestInit & { bearer?: string } = {}) => {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${init.bearer ?? token}`);
      if (init.body) headers.set('content-type', 'application/json');
      const res = await fetch(`${proxy.url}${path}`, { ...init, headers });
      const text = await res.text();
      results.push({ step, status: res.status, violations: res.headers.get('sl-violations') });
      return text ? JSON.parse(text) : undefined;
    };
    const post = (body: unknown) => ({ method: 'POST', body: JSON.stringify(body) });
    const created = await send('createKey 201', '/keys', {
      ...post({ plan: 'enterprise', limits: { perMinute: 1, perDay: 10 }, customerId: 'cus_1' }),
      headers: { 'Idempotency-Key': 'contract-1' },
    });
    const id = created.key.id as string;
    await send('createKey 200 (replay)', '/keys', {
      ...post({ plan: 'enterprise', limits: { perMinute: 1, perDay: 10 }, customerId: 'cus_1' }),
      headers: { 'Idempotency-Key': 'contract-1' },
    });
    await send('createKey 422', '/keys', {
      ...post({ plan: 'free' }),
      headers: { 'Idempotency-Key': 'contract-1' },
    });
    await send('createKey 400', '/keys', post({ plan: 'enterprise' }));
    await send('createKey 413', '/keys', post({ plan: 'free', label: 'x'.repeat(20_000) }));
    await send('createKey 401', '/keys', {
      ...post({ plan: 'free' }),
      bearer: 'wrong-token-wrong-token-wrong-token!',
    });
    await send('listKeys 200', '/keys?limit=1&customerId=cus_1');
    await send('listKeys 400', '/keys?cursor=nope');
    await send('getKey 200', `/keys/${id}`);
    await send('getKey 404', '/keys/000000000000');
    await send('getKey 400', '/keys/nope');
    // Use the key on the public port until it is banned, so that usage and unban have something to show.
    for (let i = 0; i < 3; i++) {
      await fetch(`${upstream.url}/v1/pets`, { headers: { authorization: `Bearer ${created.secret}` } });
    }
    await send('getKeyUsage 200', `/keys/${id}/usage`);
    await send('getKeyUsage 400', `/keys/${id}/usage?from=2026-02-01&to=2026-01-01`);
    await send('unbanKey 204', `/keys/${id}/unban`, { method: 'POST' });
    await send('unbanKey 204 with reset', `/keys/${id}/unban?reset=minute,day`, { method: 'POST' });
    await send('updateKey 200', `/keys/${id}`, {
      method: 'PATCH',
      body: JSON.stringify({ plan: 'pro', label: null }),
    });
    await send('updateKey 400', `/keys/${id}`, { method: 'PATCH', body: JSON.stringify({}) });
    await send('rotateKey 200', `/keys/${id}/rotate`, post({ gracePeriodSeconds: 5 }));
    await send('revokeKey 200', `/keys/${id}/revoke`, { method: 'POST' });
    await send('rotateKey 404', `/keys/${id}/rotate`, { method: 'POST' });
    const trail = await send('listAuditEvents 200', `/audit-events?keyId=${id}&actor=billing&limit=3`);
    await send('listAuditEvents 200 (next page)', `/audit-events?cursor=${trail.nextCursor}`);
    await send('listAuditEvents 400', '/audit-events?operation=deleteKey');
    expect(results.filter((r) => r.violations !== null)).toEqual([]);
    expect(results.map((r) => `${r.step}`.split(' ')[1] === String(r.status) || r)).toEqual(
      results.map(() => true),
    );
    expect(proxy.output()).not.toMatch(/Violation:|error\s+Request terminated/i);
  });
});
