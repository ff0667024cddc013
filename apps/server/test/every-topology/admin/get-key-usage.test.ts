// getKeyUsage: requests per UTC day, the running windows (admitted apart from reserved), ranges.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { maxUsageDays } from '../../../src/admin/keys/get-key-usage.js';
import { call } from '../../support/harness.js';
import { adminSuite } from './suite.js';

const suite = adminSuite();
const { adminCall, createKey } = suite;

describe('getKeyUsage', () => {
  it('counts admitted, limited and banned requests per day, and shows the running windows', async () => {
    const { key, secret } = await createKey({ plan: 'enterprise', limits: { perMinute: 3, perDay: 100 } });
    const outcomes = { admitted: 0, limited: 0, banned: 0 };
    for (let i = 0; i < 7; i++) {
      const res = await call(`${suite.server.url}/v1/pets`, secret);
      if (res.status === 200) outcomes.admitted++;
      else
        outcomes[((await res.json()) as { code: string }).code === 'rate_limited' ? 'limited' : 'banned']++;
    }
    expect(outcomes.admitted).toBe(3);
    const today = new Date().toISOString().slice(0, 10);
    const read = async () =>
      (await (await adminCall(`/keys/${key.id}/usage`)).json()) as Record<string, unknown>;
    // Before the meter writes, the answer already has this process's counts; after, the store's: equal.
    // The windows once the leases' unused points went back (leaseMs after their grant) and the process's
    // reports reached the store: nothing reserved, and `used` what was admitted. Waited for whole (within
    // the propagation bound on a quiet machine): `reserved` reads 0 too while the report of what a lease took is on its way
    // (CI, loaded: the day read 5 used for 3 admitted at that moment).
    const before = await vi.waitFor(
      async () => {
        const usage = await read();
        const windows = usage.windows as { used: number; reserved: number }[];
        expect(windows.map((w) => [w.used, w.reserved])).toEqual([
          [3, 0],
          [3, 0],
        ]);
        return usage;
      },
      // What is checked is the values, not how soon: 5 s, the bound, failed once beside a second suite on
      // both cores (PgBouncer, #57's rehearsal under load).
      { timeout: 15_000, interval: 100 },
    );
    await suite.server.meter.flush();
    const after = await read();
    for (const usage of [before, after]) {
      expect(usage.days).toEqual([{ date: today, ...outcomes }]);
      expect(usage.windows).toEqual([
        { name: 'minute', limit: 3, used: 3, reserved: 0, remaining: 0, resetAt: expect.any(String) },
        { name: 'day', limit: 100, used: 3, reserved: 0, remaining: 97, resetAt: expect.any(String) },
      ]);
    }
    const [row] = await suite.server.sql<{ admitted: number }>(
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

  it('answers ranges up to the longest the contract states, and refuses a longer one', async () => {
    const operation = readFileSync(
      fileURLToPath(new URL('../../../../../spec/admin/paths/keys_{keyId}_usage.yaml', import.meta.url)),
      'utf8',
    );
    expect(operation).toContain(`at most ${maxUsageDays} days`);
    const { key } = await createKey({ plan: 'free' });
    const from = new Date(Date.parse('2026-01-01') - (maxUsageDays - 1) * 86_400_000)
      .toISOString()
      .slice(0, 10);
    expect((await adminCall(`/keys/${key.id}/usage?from=${from}&to=2026-01-01`)).status).toBe(200);
    const before = new Date(Date.parse(from) - 86_400_000).toISOString().slice(0, 10);
    const longer = await adminCall(`/keys/${key.id}/usage?from=${before}&to=2026-01-01`);
    expect(longer.status).toBe(400);
    expect(((await longer.json()) as { message: string }).message).toContain(`At most ${maxUsageDays} days`);
  });
});
