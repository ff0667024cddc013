// revokeKey: the key stops opening the API; revoking again answers the same; a revoked key stays so.

import { describe, expect, it } from 'vitest';
import { call } from '../../support/harness.js';
import { adminSuite } from './suite.js';

const suite = adminSuite();
const { adminCall, post, createKey } = suite;

describe('revokeKey', () => {
  it('revokes (again: the same answer, no second audit record), and a revoked key cannot be changed', async () => {
    const { key, secret } = await createKey({ plan: 'free' });
    const first = await post(`/keys/${key.id}/revoke`);
    expect(first.status).toBe(200);
    const revoked = (await first.json()) as { revokedAt: string };
    expect(revoked.revokedAt).toEqual(expect.any(String));
    expect(await (await post(`/keys/${key.id}/revoke`)).json()).toEqual(revoked);
    const records = suite.server.logs
      .map((l) => JSON.parse(l))
      .filter((r) => r.operation === 'revokeKey' && r.keyId === key.id);
    expect(records).toHaveLength(1);
    expect((await call(`${suite.server.url}/v1/pets`, secret)).status).toBe(401);
    for (const res of [
      await adminCall(`/keys/${key.id}`, { method: 'PATCH', body: JSON.stringify({ plan: 'pro' }) }),
      await post(`/keys/${key.id}/rotate`),
    ]) {
      expect(res.status).toBe(404);
      expect(((await res.json()) as { message: string }).message).toMatch(/revoked/);
    }
  });
});
