// updateKey: plan, limits, label and customer; enterprise needs limits; new terms end a ban.

import { describe, expect, it } from 'vitest';
import { call } from '../../support/harness.js';
import { adminSuite } from './suite.js';

const suite = adminSuite();
const { adminCall, createKey, bannedKey } = suite;

describe('updateKey', () => {
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
    const pets = await call(`${suite.server.url}/v1/pets`, secret);
    expect(pets.headers.get('ratelimit-policy')).toContain('"minute";q=300');
    const audit = suite.server.logs
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

  it('a new plan ends a ban earned under the old one: the upgraded key is admitted at once', async () => {
    const { key, secret } = await bannedKey();
    const upgraded = await adminCall(`/keys/${key.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ plan: 'pro' }),
    });
    expect(upgraded.status).toBe(200);
    expect((await call(`${suite.server.url}/v1/pets`, secret)).status).toBe(200);
    const usage = (await (await adminCall(`/keys/${key.id}/usage`)).json()) as { bannedUntil: string | null };
    expect(usage.bannedUntil).toBeNull();
    // A change of label only is not a change of terms: a ban stays.
    const other = await bannedKey();
    await adminCall(`/keys/${other.key.id}`, { method: 'PATCH', body: JSON.stringify({ label: 'renamed' }) });
    const still = await call(`${suite.server.url}/v1/pets`, other.secret);
    expect(((await still.json()) as { code: string }).code).toBe('temporarily_banned');
  });
});
