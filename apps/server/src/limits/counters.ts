// The counter stores behind the policy: rate-limiter-flexible's SQLite, PostgreSQL and Redis stores, one
// library instance per (counter, quota) and cached, because counters are keyed by prefix + subject, not by
// quota. Which one runs is chosen by configuration (see store/open.ts).
import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { Logger } from 'pino';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRedis,
  RateLimiterSQLite,
} from 'rate-limiter-flexible';
import { guarded } from '../store/sqlite/failures.js';
import type { Db } from '../store/sqlite/index.js';

/**
 * The counter named `prefix` allowing `points` per `duration` seconds (one instance per arguments).
 * `insured: false` asks for a counter that fails while its store cannot answer, instead of falling back
 * to this instance's memory (only Redis has that fallback): the ban record, which must not read as
 * "not banned" during an outage.
 */
export type Counters = (
  prefix: string,
  points: number,
  duration: number,
  options?: { insured?: boolean },
) => RateLimiterAbstract;

export const table = 'rate_limits';

function cached(
  make: (prefix: string, points: number, duration: number, insured: boolean) => RateLimiterAbstract,
): Counters {
  const instances = new Map<string, RateLimiterAbstract>();
  return (prefix, points, duration, { insured = true } = {}) => {
    const id = `${prefix}/${points}/${duration}/${insured}`;
    let instance = instances.get(id);
    if (!instance) {
      instance = make(prefix, points, duration, insured);
      instances.set(id, instance);
    }
    return instance;
  };
}

/**
 * The connection handed to rate-limiter-flexible. Its better-sqlite3 store prepares its SQL on every call
 * (measured: about a tenth of the server's CPU under load); this adapter hands it cached statements.
 * Everything else, the transaction around each consume included, stays the library's.
 */
function withCachedStatements(db: Db) {
  const statements = new Map<string, ReturnType<Db['prepare']>>();
  return {
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = db.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
    // The library wraps each upsert, one statement, in a transaction of its own: a single SQLite
    // statement is atomic already, and run in autocommit it saves the BEGIN/COMMIT round and the
    // wrapper better-sqlite3 builds per call (measured: about a tenth of the limiter's cost).
    transaction: <T extends (...args: never[]) => unknown>(fn: T) =>
      db.inTransaction ? db.transaction(fn) : fn,
  };
}

/** Counters in the SQLite file (shared by every process on it, kept across restarts). */
export function sqliteCounters(db: Db): Counters {
  const storeClient = withCachedStatements(db);
  // Each call waits for another process's write lock on the event loop, and fails as the store's error
  // (see store/sqlite/failures.ts).
  return cached((keyPrefix, points, duration) =>
    guarded(
      new RateLimiterSQLite({
        storeClient,
        storeType: 'better-sqlite3',
        tableName: table,
        tableCreated: true, // created by our migrations; the library's own creation is asynchronous
        keyPrefix,
        points,
        duration,
      }),
      db.name,
    ),
  );
}

/** Deletes expired counter rows of the SQLite store (run hourly by main); live rows stay. */
export function sweepExpired(db: Db, now = Date.now()): number {
  return db.prepare(`DELETE FROM ${table} WHERE expire < ?`).run(now).changes;
}

/** Counters in PostgreSQL (the library deletes expired rows itself, every five minutes). */
export function postgresCounters(pool: pg.Pool): Counters {
  return cached(
    (keyPrefix, points, duration) =>
      new RateLimiterPostgres({
        storeClient: pool,
        storeType: 'pool',
        tableName: table,
        tableCreated: true,
        clearExpiredByTimeout: true,
        keyPrefix,
        points,
        duration,
      }),
  );
}

/**
 * A circuit breaker around a Redis counter (written by hand: the library has none). While Redis is known
 * to be out (`isDown`: a lost connection, or the probe's ping unanswered within REDIS_COMMAND_TIMEOUT_MS),
 * every call goes straight to the per-instance insurance, or fails at once for a counter without one,
 * instead of each waiting for its own deadline.
 */
function breaker(
  shared: RateLimiterAbstract,
  insurance: RateLimiterAbstract | undefined,
  isDown: () => string | undefined,
): RateLimiterAbstract {
  return new Proxy(shared, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      const reason = isDown();
      // Bound to the real limiter: its own inner calls (this._upsert, ...) never pass the breaker again.
      if (!reason) return value.bind(target);
      if (insurance) {
        const fallback = Reflect.get(insurance, property) as (...args: unknown[]) => unknown;
        return fallback.bind(insurance);
      }
      return () => Promise.reject(new Error(`Redis unreachable: ${reason}`));
    },
  });
}

/**
 * Counters in Redis, exact across every instance. While Redis is unreachable or stalled (a command not
 * answered within REDIS_COMMAND_TIMEOUT_MS) each instance falls back to its own in-memory counters (the
 * library's insuranceLimiter): the service stays up and every key is still limited, but per instance, so
 * N instances admit up to N times a quota until Redis returns. The switch both ways is logged, and
 * `degraded()` says why for /readyz. A ping every 500 ms notices a stall, and then the breaker sends
 * every call to memory at once; each command still has the deadline as a backstop. The deadline is not
 * tens of milliseconds: a command that times out while Redis is merely slow (or this process busy) falls
 * back to memory and can over-admit, and under load a 50 ms deadline did (measured in CI).
 */
export function redisCounters(redis: Redis, keyPrefix: string, logger: Logger) {
  let down: string | undefined;
  const lost = (reason: string) => {
    if (down) return;
    down = reason;
    logger.error(
      { reason },
      'Redis unreachable: rate limits fall back to per-instance memory until it returns',
    );
  };
  const back = () => {
    if (!down) return;
    down = undefined;
    logger.warn('Redis reachable again: rate limits are shared across instances again');
  };
  redis.on('close', () => lost('connection closed'));
  redis.on('error', (error: Error) => lost(error.message));
  redis.on('ready', back);
  const probe = setInterval(() => {
    if (redis.status !== 'ready') return; // reconnecting: 'ready' will say when it is back
    redis.ping().then(back, (error: Error) => lost(error.message));
  }, 500);
  probe.unref();
  const counters = cached((prefix, points, duration, insured) => {
    const name = `${keyPrefix}${prefix}`;
    const insurance = insured ? new RateLimiterMemory({ keyPrefix: name, points, duration }) : undefined;
    const shared = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: name,
      points,
      duration,
      rejectIfRedisNotReady: true, // do not queue behind a dead connection: use the insurance at once
      ...(insurance && { insuranceLimiter: insurance }),
    });
    return breaker(shared, insurance, () => down);
  });
  return { counters, degraded: () => down, stop: () => clearInterval(probe) };
}
