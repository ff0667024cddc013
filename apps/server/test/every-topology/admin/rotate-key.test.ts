// rotateKey: a new secret, the old one during the grace period the answer states (as stored).

import { describe, expect, it } from 'vitest';
import { call } from '../../support/harness.js';
import { adminSuite } from './suite.js';

const suite = adminSuite();
const { post, createKey } = suite;

describe('rotateKey', () => {
  it('rotates with a grace period: both secrets work, then the old one no longer', async () => {
    const { key, secret } = await createKey({ plan: 'free' });
    const res = await post(`/keys/${key.id}/rotate`, { gracePeriodSeconds: 1 });
    expect(res.status).toBe(200);
    const rotated = (await res.json()) as { secret: string; previousSecretValidUntil: string };
    expect(Date.parse(rotated.previousSecretValidUntil)).toBeGreaterThan(Date.now());
    // The instant answered is the one the store keeps (the old secret is refused from then on).
    const [stored] = await suite.server.sql<{ previous_valid_until: string }>(
      'SELECT previous_valid_until FROM api_keys WHERE id = ?',
      key.id,
    );
    expect(stored?.previous_valid_until).toBe(rotated.previousSecretValidUntil);
    expect((await call(`${suite.server.url}/v1/pets`, secret)).status).toBe(200);
    expect((await call(`${suite.server.url}/v1/pets`, rotated.secret)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_200));
    expect((await call(`${suite.server.url}/v1/pets`, secret)).status).toBe(401);
    expect((await call(`${suite.server.url}/v1/pets`, rotated.secret)).status).toBe(200);
    const now = await post(`/keys/${key.id}/rotate`);
    expect(((await now.json()) as { previousSecretValidUntil: null }).previousSecretValidUntil).toBeNull();
    expect((await call(`${suite.server.url}/v1/pets`, rotated.secret)).status).toBe(401);
  });
});
