// What a key whose requests each take a single point of its windows costs Redis (docs/decisions.md#what-the-
// limits-cost-the-store), counted on a Redis of the test's own (INFO commandstats, a script's own commands
// included): per request and window, the take's script, its INCRBY and its record; the window's end is read
// (PTTL) only when this process does not know it already (its first take in the window), and the key's ban
// not at all while the ban list is up to date (limits/bans.ts), so that a quiet key costs less than a
// per-request counter even at an instance's first take of each window.
import { pino } from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openBackend } from '../../src/store/open.js';
import { backend } from '../support/backends.js';
import { call, freshStore, startServer } from '../support/harness.js';
import { privateRedis } from '../support/private-redis.js';
import { ask } from '../support/redis-topologies.js';

/** How many times Redis ran the commands `names` between two counts (a script: EVALSHA, or EVAL the first time). */
const ranBetween =
  (from: Record<string, number>, to: Record<string, number>) =>
  (...names: string[]): number =>
    names.reduce((sum, name) => sum + (to[name] ?? 0) - (from[name] ?? 0), 0);

/** How many times Redis ran each command since it started. */
async function commandCounts(port: number): Promise<Record<string, number>> {
  const stats = (await ask(port, 'INFO', 'commandstats')) as string;
  return Object.fromEntries(
    [...stats.matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)].map(([, name, calls]) => [name, Number(calls)]),
  );
}

describe.runIf(backend === 'postgres+redis')('what single-point takes cost Redis', () => {
  it("reads a window's end once per window and process and no ban per request: six commands a request", async () => {
    const redis = await privateRedis();
    const server = await startServer({ store: { ...(await freshStore()), REDIS_URL: redis.url } });
    onTestFinished(() => server.close());
    // 15 a minute and a day: what is left is under 16 all along, so every take asks one point (an eighth of
    // what is left, one at least), used at once, however fast the requests come.
    const key = await server.key({ perMinute: 15, perDay: 15 });
    // The ban list, read by the server every second (ZRANGE … BYSCORE, one command whatever the keys),
    // is up to date once it has answered.
    await expect.poll(async () => (await commandCounts(redis.port)).zrange ?? 0).toBeGreaterThan(0);
    // The first request starts both windows: each end set by the command that finds the window new
    // (PEXPIRE NX), not read; no ban read.
    const start = await commandCounts(redis.port);
    expect((await call(`${server.url}/v1/pets`, key)).status).toBe(200);
    const before = await commandCounts(redis.port);
    const first = ranBetween(start, before);
    expect([
      first('evalsha', 'eval'),
      first('incrby'),
      first('pexpire'),
      first('set'),
      first('pttl'),
    ]).toEqual([2, 2, 2, 2, 0]);
    const requests = 10;
    for (let i = 0; i < requests; i++) expect((await call(`${server.url}/v1/pets`, key)).status).toBe(200);
    const after = await commandCounts(redis.port);
    const ran = ranBetween(before, after);
    // A take of each window per request: its script, the INCRBY and its record (SET)...
    expect(ran('evalsha', 'eval')).toBe(2 * requests);
    expect(ran('incrby')).toBe(2 * requests);
    expect(ran('set')).toBe(2 * requests);
    // ...and no PTTL: neither the windows' ends, known from the first take, nor the ban of record, which
    // the ban list makes unnecessary (bans.ts). Six commands a request in all, where a per-request
    // counter's two consumes cost eight (seven before the ban list, nine before the ends were known).
    expect(ran('pttl')).toBe(0);
    expect(ran('pexpire')).toBe(0);
  });

  it("a give-back of unused points costs its script, the window's end, its name and the DECRBY: four commands", async () => {
    const redis = await privateRedis();
    const config = loadConfig({ ...(await freshStore()), REDIS_URL: redis.url, NODE_ENV: 'test' });
    const opened = await openBackend(config.database, config.redis, pino({ level: 'silent' }));
    onTestFinished(() => opened.close());
    const { counters } = opened;
    const grant = await counters.take('minute:cost', 6, 10, 60_000);
    const before = await commandCounts(redis.port);
    await counters.giveBack('minute:cost', 4, grant.resetAt, 'back-cost');
    const ran = ranBetween(before, await commandCounts(redis.port));
    expect([
      ran('evalsha', 'eval'),
      ran('pttl'),
      ran('set'),
      ran('decrby'),
      ran('get'),
      ran('incrby'),
    ]).toEqual([1, 1, 1, 1, 0, 0]);
    expect(await counters.read('minute:cost')).toMatchObject({ used: 2 });
    // More given back than the window counts (it was started over meanwhile): it counts nothing, not less.
    await counters.giveBack('minute:cost', 5, grant.resetAt, 'back-more');
    expect(await counters.read('minute:cost')).toMatchObject({ used: 0 });
  });
});
