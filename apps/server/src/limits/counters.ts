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
import type { Db } from '../store/sqlite/index.js';

/** The counter named `prefix` allowing `points` per `duration` seconds (one instance per arguments). */
export type Counters = (prefix: string, points: number, duration: number) => RateLimiterAbstract;

export const table = 'rate_limits';

function cached(make: (prefix: string, points: number, duration: number) => RateLimiterAbstract): Counters {
  const instances = new Map<string, RateLimiterAbstract>();
  return (prefix, points, duration) => {
    const id = `${prefix}/${points}/${duration}`;
    let instance = instances.get(id);
    if (!instance) {
      instance = make(prefix, points, duration);
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
  return cached(
    (keyPrefix, points, duration) =>
      new RateLimiterSQLite({
        storeClient,
        storeType: 'better-sqlite3',
        tableName: table,
        tableCreated: true, // created by our migrations; the library's own creation is asynchronous
        keyPrefix,
        points,
        duration,
      }),
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
 * Counters in Redis, exact across every instance. While Redis is unreachable each instance falls back to
 * its own in-memory counters (the library's insuranceLimiter): the service stays up and every key is
 * still limited, but per instance, so N instances admit up to N times a quota until Redis returns. The
 * switch both ways is logged.
 */
export function redisCounters(redis: Redis, keyPrefix: string, logger: Logger): Counters {
  let down = false;
  const lost = (reason: string) => {
    if (down) return;
    down = true;
    logger.error(
      { reason },
      'Redis unreachable: rate limits fall back to per-instance memory until it returns',
    );
  };
  redis.on('close', () => lost('connection closed'));
  redis.on('error', (error: Error) => lost(error.message));
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.warn('Redis reachable again: rate limits are shared across instances again');
  });
  return cached((prefix, points, duration) => {
    const name = `${keyPrefix}${prefix}`;
    return new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: name,
      points,
      duration,
      rejectIfRedisNotReady: true, // do not queue behind a dead connection: use the insurance at once
      insuranceLimiter: new RateLimiterMemory({ keyPrefix: name, points, duration }),
    });
  });
}
