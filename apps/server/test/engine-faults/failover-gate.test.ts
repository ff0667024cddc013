// The counters after a Sentinel failover (store/redis/counters.ts, failoverGate), on a real Redis: shared
// again only once the connection is on the primary the Sentinels named. Here the Sentinels' word is given by
// hand (failover.started / failover.ended) to a connection on a plain Redis: where the Sentinels name
// another primary, the connection is made again (a demoted primary answers a ping, and refuses every write).
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { redisCounters } from '../../src/store/redis/counters.js';
import { backend, freshStore, redisClient } from '../support/backends.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
  /** Waits up to 5 s for the counters to be shared again. */
  const sharedAgain = async (shared: Awaited<ReturnType<typeof counters>>['shared']) => {
    const started = Date.now();
    while (shared.degraded() !== undefined && Date.now() - started < 5_000) await sleep(50);
    expect(shared.degraded()).toBeUndefined();
  };

  it('when the Sentinels name a primary the connection is not on, then the connection is made again at once and the counters stay on memory until it is up, with one warning and no error', async () => {
    const { shared, client, logs } = await counters();
    const at = client.stream.remoteAddress?.replace(/^::ffff:/, '') as string;
    const before = client.stream;
    shared.failover.started();
    expect(shared.degraded()).toBeDefined();
    shared.failover.ended({ host: at, port: (client.stream.remotePort as number) + 1 });
    expect(shared.degraded()).toBeDefined(); // the old primary would answer a ping: not a sign of a move
    await sharedAgain(shared); // made again (here to the same Redis: the Sentinels' word is by hand)
    expect(client.stream).not.toBe(before);
    const outage = logs.filter((l) => /unreachable/.test(l.msg));
    expect(outage.map((l) => l.level)).toEqual([40]);
  });

  it('when the Sentinels name the same port on another host (every real Redis listens on 6379), then the connection is made again too', async () => {
    const { shared, client } = await counters();
    const at = client.stream.remoteAddress?.replace(/^::ffff:/, '') as string;
    const elsewhere = at === '127.0.0.2' ? '127.0.0.3' : '127.0.0.2';
    const before = client.stream;
    shared.failover.started();
    shared.failover.ended({ host: elsewhere, port: client.stream.remotePort as number });
    expect(shared.degraded()).toBeDefined(); // the port alone is not the primary
    await sharedAgain(shared);
    expect(client.stream).not.toBe(before);
  });

  it('when a new primary is named without the failover heard starting (a lost message), then the counters leave Redis until the connection is made again, with a warning', async () => {
    const { shared, client, logs } = await counters();
    const at = client.stream.remoteAddress?.replace(/^::ffff:/, '') as string;
    const before = client.stream;
    shared.failover.ended({ host: at, port: (client.stream.remotePort as number) + 1 });
    expect(shared.degraded()).toBeDefined();
    await sharedAgain(shared);
    expect(client.stream).not.toBe(before);
    expect(logs.filter((l) => /unreachable/.test(l.msg)).map((l) => l.level)).toEqual([40]);
  });

  it('when the connection is already on the primary the Sentinels named, then they are shared again at once', async () => {
    const { shared, client } = await counters();
    const at = client.stream.remoteAddress?.replace(/^::ffff:/, '') as string;
    const before = client.stream;
    shared.failover.started();
    shared.failover.ended({ host: at, port: client.stream.remotePort as number });
    await sleep(300); // the marker read back (breaker.ts), and nothing more: the probe's 500 ms not needed
    expect(shared.degraded()).toBeUndefined();
    expect(client.stream).toBe(before); // not made again
  });
});
