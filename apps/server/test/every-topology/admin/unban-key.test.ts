// unbanKey: ends a ban at once; with `reset`, starts the used-up windows over.

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

  it('a used-up minute keeps refusing after an unban (429, not a ban), until reset=minute starts it over', async () => {
    const { key, secret } = await bannedKey(); // its minute of 1 used
    expect((await post(`/keys/${key.id}/unban`)).status).toBe(204);
    const refused = await call(`${suite.server.url}/v1/pets`, secret);
    expect([refused.status, ((await refused.json()) as { code: string }).code]).toEqual([
      429,
      'rate_limited',
    ]);
    expect((await post(`/keys/${key.id}/unban?reset=minute`)).status).toBe(204);
    // Every instance takes from the fresh window at its next look at the store: within a second here.
    const status = async () => (await call(`${suite.server.url}/v1/pets`, secret)).status;
    await expect.poll(status, { timeout: 2_000, interval: 100 }).toBe(200);
    const usage = (await (await adminCall(`/keys/${key.id}/usage`)).json()) as {
      windows: { name: string; used: number; remaining: number }[];
    };
    expect(usage.windows.find((w) => w.name === 'minute')).toMatchObject({ used: 1, remaining: 0 });
    expect((await call(`${suite.server.url}/v1/pets`, secret)).status).toBe(429); // the new minute's 1, used
  });

  it('reset names only the windows of the contract: anything else is a 400 naming query.reset, and changes nothing', async () => {
    const { key } = await bannedKey();
    const res = await post(`/keys/${key.id}/unban?reset=hour`);
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain('reset');
    const usage = (await (await adminCall(`/keys/${key.id}/usage`)).json()) as { bannedUntil: string | null };
    expect(usage.bannedUntil).not.toBeNull(); // still banned
  });
});
