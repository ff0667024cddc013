// unbanKey: ends a ban at once.

import { describe, expect, it } from 'vitest';
import { call } from '../../support/harness.js';
import { adminSuite } from './suite.js';

const suite = adminSuite();
const { adminCall, post, bannedKey } = suite;

describe('unbanKey', () => {
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
    expect((await call(`${suite.server.url}/v1/pets`, secret)).status).toBe(200);
  });
});
