// The one place that picks the engines from the configuration: the store from DATABASE_URL (SQLite or
// PostgreSQL), the rate-limit counters from REDIS_URL (Redis) or else from the same database. Nothing
// else imports an engine folder, except the SQLite-specific tests and tools.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Database, RedisConfig } from '../config.js';
import {
  type Counters,
  postgresCounters,
  redisCounters,
  sqliteCounters,
  sweepExpired,
} from '../limits/counters.js';
import { StoreOpenError } from './open-error.js';
import { openSqliteStore } from './sqlite/index.js';
import { idempotencyWindowMs, type Store } from './store.js';

export type Backend = {
  store: Store;
  counters: Counters;
  /** What runs, for the start log: `sqlite`, `postgres`, `postgres+redis`, ... */
  name: string;
  /** Why the service runs degraded (e.g. Redis unreachable: limits per instance), or undefined. */
  degraded(): string | undefined;
  close(): Promise<void>;
};

/** Runs `task` every hour without keeping the process alive; returns the cancel. */
function hourly(task: () => unknown): () => void {
  const timer = setInterval(task, 3_600_000);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Connects to Redis before the service answers anything: a request served before the connection is ready
 * would fall back to per-instance memory, where a ban of record in Redis is not seen. Unreachable at start
 * is a configuration error (StoreOpenError naming REDIS_URL); lost later, the counters' insurance takes over.
 */
async function connectRedis({ url, commandTimeoutMs }: RedisConfig): Promise<Redis> {
  // No offline queue and one retry: a request must not wait behind a dead connection (see redisCounters).
  const { Redis } = await import('ioredis');
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    lazyConnect: true,
    connectTimeout: 5000,
    commandTimeout: commandTimeoutMs, // a stalled Redis (connected, silent) fails fast, like a lost one
  });
  let reason = 'connection closed';
  const noted = (error: Error) => {
    reason = error.message;
  };
  client.on('error', noted);
  try {
    await client.connect();
    return client;
  } catch {
    client.disconnect();
    const where = new URL(url);
    throw new StoreOpenError(
      `REDIS_URL: Redis at ${where.host} cannot be reached (${reason}); check that it is running and reachable, and the URL.`,
    );
  } finally {
    client.off('error', noted);
  }
}

/** Opens the store (throws StoreOpenError with an operator's message) and the counters. */
export async function openBackend(
  database: Database,
  redis: RedisConfig | undefined,
  logger: Logger,
): Promise<Backend> {
  let store: Store;
  let counters: Counters;
  let degraded: () => string | undefined = () => undefined;
  const cleanups: (() => unknown)[] = [];
  if (database.engine === 'sqlite') {
    const opened = openSqliteStore(database.path);
    store = opened.store;
    counters = sqliteCounters(opened.db);
    cleanups.push(hourly(() => sweepExpired(opened.db)));
  } else {
    // Engines are loaded only when configured: an SQLite service never loads pg or ioredis (memory, start).
    const { openPostgresStore } = await import('./postgres/index.js');
    const opened = await openPostgresStore(database);
    store = opened.store;
    counters = postgresCounters(opened.pool);
  }
  // Idempotency keys are forgotten after a day (see http/idempotency.ts).
  cleanups.push(hourly(() => store.idempotency.prune(Date.now() - idempotencyWindowMs).catch(() => 0)));
  const close = async () => {
    for (const cleanup of cleanups) await cleanup();
    await store.close();
  };
  if (redis) {
    let client: Redis;
    try {
      client = await connectRedis(redis);
    } catch (error) {
      await close().catch(() => {});
      throw error;
    }
    const shared = redisCounters(client, redis.keyPrefix, logger);
    counters = shared.counters;
    degraded = () => {
      const reason = shared.degraded();
      return reason && `Redis unreachable (${reason}): rate limits are per instance`;
    };
    cleanups.push(shared.stop, () => client.disconnect());
  }
  return { store, counters, name: `${database.engine}${redis ? '+redis' : ''}`, close, degraded };
}
