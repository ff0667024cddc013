// Leases between real processes on every backend: a process admits from a lease of the shared window; a
// graceful stop gives its unused points back, kill -9 loses them (under-admits by at most one lease, never
// over-admits); a window that ends while leases are out starts afresh.
import { createKey, enterprise, type ServerProcess } from '@animal-store/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { call, freshStore, serverDist, startProcess, type TestStore } from '../support/harness.js';

const running: ServerProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.stop()));
});

const start = async (store: TestStore) => {
  const server = await startProcess({ ...store, NODE_ENV: 'production', LOG_LEVEL: 'warn' });
  running.push(server);
  return server;
};
/** How many of `n` concurrent requests the server admits. */
const admitted = async (server: ServerProcess, key: string, n: number) =>
  (
    await Promise.all(
      Array.from({ length: n }, () => call(`${server.url}/v1/pets`, key).then((r) => r.status)),
    )
  ).filter((s) => s === 200).length;

// A key of 80 a minute: a process's first lease is 10 points (an eighth of what is left).
const quota = 80;
const firstLease = 10;

describe('leases across processes', () => {
  it('a graceful stop gives the unused lease back: the next process admits the rest exactly', async () => {
    const store = await freshStore();
    const { key } = await createKey(serverDist, { ...store }, ...enterprise(quota, 100_000));
    const first = await start(store);
    expect(await admitted(first, key, 1)).toBe(1);
    await first.stop();
    running.splice(running.indexOf(first), 1);
    expect(await admitted(await start(store), key, quota)).toBe(quota - 1);
  });

  it('kill -9 of a process holding a lease: never over-admits, under-admits by at most that lease', async () => {
    const store = await freshStore();
    const { key } = await createKey(serverDist, { ...store }, ...enterprise(quota, 100_000));
    const first = await start(store);
    expect(await admitted(first, key, 1)).toBe(1);
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    running.splice(running.indexOf(first), 1);
    const rest = await admitted(await start(store), key, quota);
    expect(1 + rest).toBeLessThanOrEqual(quota);
    expect(1 + rest).toBeGreaterThanOrEqual(quota - (firstLease - 1));
  });

  it('two processes near the limit never admit more than the limit between them', async () => {
    const store = await freshStore();
    const { key } = await createKey(serverDist, { ...store }, ...enterprise(quota, 100_000));
    const [a, b] = await Promise.all([start(store), start(store)]);
    const rounds = [];
    for (let i = 0; i < 4; i++) {
      rounds.push(
        ...(await Promise.all([
          admitted(a as ServerProcess, key, 25),
          admitted(b as ServerProcess, key, 25),
        ])),
      );
    }
    const total = rounds.reduce((sum, n) => sum + n, 0);
    expect(total).toBeLessThanOrEqual(quota);
    expect(total).toBeGreaterThanOrEqual(quota - 2 * firstLease);
  });
});
