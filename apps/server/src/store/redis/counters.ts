// The limiter's counters in Redis (limits/counter-store.ts), exact across every instance: each operation is
// one Lua script or command, so it is atomic. While Redis is unreachable or stalled, the windows fall back to
// this instance's memory (limits/memory-counters.ts): the service stays up and every key is still limited,
// but per instance, so N instances admit up to N times a quota until Redis returns. Marks (bans) have no
// such fallback: they fail, and the limiter honours the bans it has seen (limits/ban-cache.ts).
//
// The first call that fails or stays unanswered for REDIS_COMMAND_TIMEOUT_MS switches every call to memory
// at once (a circuit breaker), and a ping every 500 ms notices a stall between requests. A connection that
// went silent is destroyed and replaced (connect.ts: ioredis's socketTimeout), so that Redis answers again
// within a reconnection of a heal, not after TCP's back-off. Redis is shared again only once its marker
// says whether it kept its data: if it did, points leased before the outage stay good (the epoch holds);
// if not, a new epoch drops them (limits/leases.ts). Written by hand: docs/decisions.md#redis-breaker.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { type CounterStore, fallbackEpoch } from '../../limits/counter-store.js';
import { memoryCounters } from '../../limits/memory-counters.js';

/** How long an instance's marker lasts unless renewed (see `marker`). */
const markerMs = 24 * 3_600_000;

// KEYS[1] the window; ARGV want, limit, window ms. Returns granted, used, ms until the window ends.
const take = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
local fresh = ttl <= 0
if fresh then used = 0; ttl = tonumber(ARGV[3]) end
local granted = math.max(0, math.min(tonumber(ARGV[1]), tonumber(ARGV[2]) - used))
if granted > 0 then
  if fresh then redis.call('SET', KEYS[1], granted, 'PX', ttl) else redis.call('INCRBY', KEYS[1], granted) end
end
return {granted, used + granted, ttl}`;

// KEYS[1] the window; ARGV points. The window still running is the one the points came from: a lease is
// given back only before its window ends (limits/leases.ts).
const giveBack = `
local used = tonumber(redis.call('GET', KEYS[1]) or '-1')
if used <= 0 then return 0 end
local back = math.min(used, tonumber(ARGV[1]))
redis.call('DECRBY', KEYS[1], back)
return back`;

type Scripts = Redis & {
  leaseTake(key: string, want: number, limit: number, windowMs: number): Promise<[number, number, number]>;
  leaseGiveBack(key: string, points: number): Promise<number>;
};

/** The counters, why they run on memory now (undefined when shared), and the stop of the probe. */
export function redisCounters(redis: Redis, keyPrefix: string, logger: Logger, now = () => Date.now()) {
  redis.defineCommand('leaseTake', { numberOfKeys: 1, lua: take });
  redis.defineCommand('leaseGiveBack', { numberOfKeys: 1, lua: giveBack });
  const client = redis as Scripts;
  /** Why memory answers now; undefined while Redis does. */
  let down: string | undefined;
  /** Redis's epoch (CounterStore.epoch): a new one each time it comes back without its data. */
  let epoch = 0;
  /** Set by stop: the connection's close from here on is the service's own doing, not an outage. */
  let stopped = false;
  const lost = (reason: string) => {
    if (down || stopped) return;
    down = reason;
    logger.error(
      { reason },
      'Redis unreachable: rate limits fall back to per-instance memory until it returns',
    );
  };
  // A key of this instance's own: when Redis answers again without it, Redis lost its data (restarted
  // without persistence, flushed, or evicted keys): every key's windows and bans started over, and
  // operators are told so (docs/scaling-out.md, the Redis settings to run with). Its own, not one shared:
  // the first instance back would set a shared one, and every other would take the empty Redis for the
  // one it left (keeping leases the new Redis never counted, and never saying it). It lasts a day,
  // renewed hourly, and goes at a graceful stop.
  const marker = `${keyPrefix}marker:${randomUUID()}`;
  const setMarker = () => redis.set(marker, '1', 'PX', markerMs).catch(() => {});
  const renew = setInterval(setMarker, markerMs / 24);
  renew.unref();
  let returning: Promise<void> | undefined;
  /** Redis answers again: shared once its marker says which epoch it is in. */
  const back = () => {
    if (!down || returning) return;
    returning = redis
      .exists(marker)
      .then(
        async (kept) => {
          if (!kept) {
            epoch++;
            await setMarker();
            logger.warn(
              "Redis came back empty (restarted without persistence, flushed or evicting): every key's rate-limit windows and bans started over",
            );
          }
          down = undefined;
          logger.warn('Redis reachable again: rate limits are shared across instances again');
        },
        () => {}, // not yet: the probe asks again
      )
      .finally(() => {
        returning = undefined;
      });
  };
  void setMarker();
  redis.on('close', () => lost('connection closed'));
  redis.on('error', (error: Error) => lost(error.message));
  redis.on('ready', back);
  let probing = false;
  const probe = setInterval(() => {
    if (redis.status !== 'ready' || probing) return; // reconnecting: 'ready' will say when it is back
    probing = true;
    redis
      .ping()
      .then(back, (error: Error) => lost(error.message))
      .finally(() => {
        probing = false;
      });
  }, 500);
  probe.unref();

  const memory = memoryCounters(now);
  const name = (key: string) => `${keyPrefix}${key}`;
  /**
   * A window operation on Redis, or on memory while Redis is out. A call that fails switches every call
   * to memory at once (no other request waits out the same silence); the probe switches back.
   */
  const sharedOrMemory = async <T>(shared: () => Promise<T>, fallback: () => Promise<T>): Promise<T> => {
    if (down) return fallback();
    try {
      return await shared();
    } catch (error) {
      lost((error as Error).message);
      return fallback();
    }
  };
  /** A mark operation: no fallback (a ban must not read as absent from an empty memory). */
  const sharedOnly = async <T>(shared: () => Promise<T>): Promise<T> => {
    if (down) throw new Error(`Redis unreachable: ${down}`);
    try {
      return await shared();
    } catch (error) {
      lost((error as Error).message);
      throw error;
    }
  };

  const counters: CounterStore = {
    take: (key, want, limit, windowMs) =>
      sharedOrMemory(
        async () => {
          const at = epoch;
          const [granted, used, ttl] = await client.leaseTake(name(key), want, limit, windowMs);
          return { granted, used, resetAt: now() + ttl, epoch: at };
        },
        async () => ({ ...(await memory.take(key, want, limit, windowMs)), epoch: fallbackEpoch }),
      ),
    giveBack: (key, points, resetAt) =>
      sharedOrMemory(
        async () => {
          if (resetAt > now()) await client.leaseGiveBack(name(key), points);
        },
        () => memory.giveBack(key, points, resetAt),
      ),
    read: (key) =>
      sharedOrMemory(
        async () => {
          const [used, ttl] = await Promise.all([client.get(name(key)), client.pttl(name(key))]);
          return ttl > 0 ? { used: Number(used ?? 0), resetAt: now() + ttl } : { used: 0, resetAt: 0 };
        },
        () => memory.read(key),
      ),
    endsAt: (key) =>
      sharedOnly(async () => {
        const ttl = await redis.pttl(name(key));
        return ttl > 0 ? now() + ttl : 0;
      }),
    mark: (key, ms) =>
      sharedOnly(async () => {
        await redis.set(name(key), 1, 'PX', ms);
      }),
    delete: (key) =>
      sharedOrMemory(
        async () => {
          await Promise.all([redis.del(name(key)), memory.delete(key)]);
        },
        () => memory.delete(key),
      ),
    sweep: () => memory.sweep(), // Redis expires its own keys
    get epoch() {
      return down ? fallbackEpoch : epoch;
    },
  };
  const stop = async () => {
    stopped = true;
    clearInterval(probe);
    clearInterval(renew);
    if (!down) await redis.del(marker).catch(() => {});
  };
  return { counters, degraded: () => down, stop };
}
