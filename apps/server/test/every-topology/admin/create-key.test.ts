// createKey: plans and limits, the secret shown once, Location, Idempotency-Key replays and reuse.

import { describe, expect, it } from 'vitest';
import { call } from '../../support/harness.js';
import { adminSuite, nextToken } from './suite.js';

const suite = adminSuite();
const { adminCall, post } = suite;

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
    expect((await call(`${suite.server.url}/v1/pets`, created.secret)).status).toBe(200);
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
    const before = (await suite.server.keys.list()).length;
    const res = await post('/keys', body);
    expect(res.status).toBe(400);
    const error = (await res.json()) as { code: string; message: string };
    expect(error.code).toBe('invalid_request');
    expect(error.message).toMatch(message);
    expect((await suite.server.keys.list()).length).toBe(before);
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

  it("an Idempotency-Key is the admin's own: another admin's create with it is a create, not a replay", async () => {
    const headers = { 'Idempotency-Key': `shared-${Date.now()}` };
    const body = { plan: 'free', customerId: 'cus_two_admins' };
    const mine = await post('/keys', body, headers);
    expect(mine.status).toBe(201);
    const theirs = await suite.as(nextToken)('/keys', {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    const [a, b] = [
      (await mine.json()) as { key: { id: string } },
      (await theirs.json()) as { key: { id: string } },
    ];
    expect(b.key.id).not.toBe(a.key.id);
    // Each admin's retry replays their own.
    const again = await suite.as(nextToken)('/keys', { method: 'POST', headers, body: JSON.stringify(body) });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { id: string }).id).toBe(b.key.id);
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
