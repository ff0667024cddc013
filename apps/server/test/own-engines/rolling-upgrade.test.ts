// A rolling upgrade from 1.1.0, as an operator runs one on PostgreSQL + Redis: an instance of 1.1.0 (built
// from its commit, on the Node it ran on: releases.ts) and one of this release side by side on one
// store under a request loop, then the old one stopped. The usage this release reports never understates
// what was admitted while both ran (1.1.0 reports no admissions: what it took counts as used), and equals
// it once the old instance is gone; the old instance's answers still read.
import { afterEach, describe, expect, it } from 'vitest';
import { freshStore } from '../support/backends.js';
import { call, processesStoppedAfterEach, type ServerProcess } from '../support/harness.js';
import { type OldRelease, oldRelease, startRelease } from '../support/releases.js';

const token = 'rolling-upgrade-admin-token-0123456789abcdef';
const startNew = processesStoppedAfterEach();
const old: { stop: () => Promise<number | null> }[] = [];
afterEach(async () => {
  await Promise.all(old.splice(0).map((s) => s.stop()));
});

/** The 1.1.0 server on `env` (stopped after the test). */
async function startOld(release: OldRelease, env: Record<string, string>) {
  const started = await startRelease(release, env);
  old.push(started);
  return started;
}

type Window = { name: string; used: number; reserved: number; remaining: number };
const dayWindow = async (server: ServerProcess, keyId: string) => {
  const res = await call(`${server.adminUrl}/admin/v1/keys/${keyId}/usage`, token);
  expect(res.status).toBe(200);
  return ((await res.json()) as { windows: Window[] }).windows.find((w) => w.name === 'day') as Window;
};

// Built once per clone (about a minute), hence the long timeout.
const release = oldRelease('1.1.0');

describe.runIf(release !== undefined)('a rolling upgrade from 1.1.0 on PostgreSQL + Redis', () => {
  it('usage never understates what was admitted while both run, and equals it once 1.1.0 is stopped', {
    timeout: 180_000,
  }, async () => {
    const store = await freshStore('postgres+redis');
    const env = { ...store, NODE_ENV: 'production', LOG_LEVEL: 'warn' };
    const previous = await startOld(release as OldRelease, env);
    const current = await startNew({ ...env, ADMIN_PORT: '0', ADMIN_TOKENS: token });
    const created = await call(`${current.adminUrl}/admin/v1/keys`, token, {
      method: 'POST',
      body: JSON.stringify({ plan: 'enterprise', limits: { perMinute: 100_000, perDay: 1_000_000 } }),
    });
    const { key, secret } = (await created.json()) as { key: { id: string }; secret: string };

    // The loop: every request to one instance or the other, each 200 counted as the client saw it.
    let admitted = 0;
    for (let i = 0; i < 300; i++) {
      const res = await call(`${(i % 3 === 0 ? current : previous).url}/v1/pets`, secret);
      if (res.status === 200) admitted++;
      await res.arrayBuffer();
    }
    expect(admitted).toBe(300);
    // Both instances running: what 1.1.0 took counts as used (its unused lease too), so never less than
    // the admissions; what this release leased and did not use is reserved. Within a report (5 s).
    const used = async () => (await dayWindow(current, key.id)).used;
    await expect.poll(used, { timeout: 12_000, interval: 200 }).toBeGreaterThanOrEqual(admitted);
    expect(await used()).toBeLessThanOrEqual(admitted + 100); // the old instance's one unused lease at most

    // 1.1.0 stopped (the upgrade's next step): it gives its unused lease back; the usage is exact.
    expect(await previous.stop()).toBe(0);
    await expect
      .poll(() => dayWindow(current, key.id), { timeout: 12_000, interval: 200 })
      .toMatchObject({ used: admitted, remaining: 1_000_000 - admitted });
  });
});
