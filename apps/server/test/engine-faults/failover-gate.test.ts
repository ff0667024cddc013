// The counters after a Sentinel failover (store/redis/counters.ts, failoverGate), on a real Redis: shared
// again only once the connection is on the primary the Sentinels named. Here the Sentinels' word is given by
// hand (failover.started / failover.ended) and the connection stays where it is, as it does on a demoted
// primary that ioredis has not left yet: that one answers a ping, and refuses every write.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { redisCounters } from '../../src/store/redis/counters.js';
import { backend, freshStore, redisClient } from '../support/backends.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function counters() {
  const store = await freshStore();
  const client = (await redisClient(store.REDIS_URL)) as Redis;
  const logs: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  const shared = redisCounters(
    client,
    { keyPrefix: store.REDIS_KEY_PREFIX as string, commandTimeoutMs: 500 },
    logger,
  );
  cleanups.push(() => client.disconnect());
  cleanups.push(() => shared.stop());
  await shared.counters.take('warm', 1, 10, 60_000); // shared, and the instance's marker left
  expect(shared.degraded()).toBeUndefined();
  return { shared, client, logs };
}

describe.runIf(backend === 'postgres+redis')('the counters after a Sentinel failover', () => {
  it('when the Sentinels name a primary the connection is not on, then they stay on memory until it has moved (remade after 2 s), with one warning and no error', async () => {
    const { shared, client, logs } = await counters();
    const at = client.stream.remoteAddress?.replace(/^::ffff:/, '') as string;
    shared.failover.started();
    expect(shared.degraded()).toBeDefined();
    shared.failover.ended({ host: at, port: (client.stream.remotePort as number) + 1 });
    // The probe pings every 500 ms, and the old primary would answer: not a sign that the move is done.
    await sleep(1_500);
    expect(shared.degraded()).toBeDefined();
    // Not moved within 2 s: the connection is made again (to wherever Sentinel would say; here, the same).
    await expect.poll(() => shared.degraded(), { timeout: 5_000 }).toBeUndefined();
    const outage = logs.filter((l) => /unreachable/.test(l.msg));
    expect(outage.map((l) => l.level)).toEqual([40]);
  });

  it('when the Sentinels name the same port on another host (every real Redis listens on 6379), then they stay on memory until it has moved', async () => {
    const { shared, client } = await counters();
    const at = client.stream.remoteAddress?.replace(/^::ffff:/, '') as string;
    const elsewhere = at === '127.0.0.2' ? '127.0.0.3' : '127.0.0.2';
    shared.failover.started();
    shared.failover.ended({ host: elsewhere, port: client.stream.remotePort as number });
    await sleep(1_500);
    expect(shared.degraded()).toBeDefined(); // the demoted primary answers a ping: not a move
  });

  it('when the connection is already on the primary the Sentinels named, then they are shared again at once', async () => {
    const { shared, client } = await counters();
    const at = client.stream.remoteAddress?.replace(/^::ffff:/, '') as string;
    shared.failover.started();
    shared.failover.ended({ host: at, port: client.stream.remotePort as number });
    // The marker read back (breaker.ts), and nothing more: sooner than the probe's 500 ms.
    await expect.poll(() => shared.degraded(), { timeout: 400 }).toBeUndefined();
  });
});
