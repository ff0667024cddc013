// The one place that picks the engines from the configuration: the store from DATABASE_URL (SQLite or
// PostgreSQL), the rate-limit counters from REDIS_URL (Redis) or else from the same database. Nothing
// else imports an engine folder, except the SQLite-specific tests and tools.
import type { Logger } from 'pino';
import type { Database, RedisConfig } from '../config.js';
import type { CounterStore } from '../limits/counter-store.js';
import { Stops } from '../stops.js';
import { withKeyCache } from './key-cache.js';
import { openSqliteStore, sqliteCounters } from './sqlite/index.js';
import { idempotencyWindowMs, type Store } from './store.js';

export type Backend = {
  store: Store;
  /** The rate limiter's counters: in Redis when configured, else in the store's own database. */
  counters: CounterStore;
  /** What runs, for the start log: `sqlite`, `postgres`, `postgres+redis`, ... */
  name: string;
  /** Why the service runs degraded (e.g. Redis unreachable: limits per instance), or undefined. */
  degraded(): string | undefined;
  /** Store calls waiting for a connection now (PostgreSQL's pool is full); 0 where none ever wait. */
  waiting(): number;
  close(): Promise<void>;
};

/** What runs, as the start log and the metrics name it: `sqlite`, `postgres`, `postgres+redis`, ... */
export const backendName = (database: Database, redis: RedisConfig | undefined): string =>
  `${database.engine}${redis ? '+redis' : ''}`;

/** Runs `task` every hour without keeping the process alive; returns the cancel. */
function hourly(task: () => unknown): () => void {
  const timer = setInterval(task, 3_600_000);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Opens the store (throws StoreOpenError with an operator's message) and the counters. Each part registers
 * its stop as it is made (stops.ts); `close` runs them.
 */
export async function openBackend(
  database: Database,
  redis: RedisConfig | undefined,
  logger: Logger,
): Promise<Backend> {
  let store: Store;
  let counters: CounterStore;
  let degraded: () => string | undefined = () => undefined;
  let waiting = () => 0;
  const stops = new Stops();
  if (database.engine === 'sqlite') {
    const opened = openSqliteStore(database.path);
    store = opened.store;
    counters = sqliteCounters(opened.db);
  } else {
    // Engines are loaded only when configured: an SQLite service never loads pg or ioredis (memory, start).
    const { openPostgresStore, postgresCounters } = await import('./postgres/index.js');
    const opened = await openPostgresStore(database);
    store = opened.store;
    counters = postgresCounters(opened.pg);
    // pg-pool queues every checkout for a tick, an idle connection's too: those are served at once, not
    // waiting (the scrape's own store reads showed 1 on an idle instance, and the alert fired at rest).
    const { pool } = opened.pg;
    waiting = () => Math.max(0, pool.waitingCount - pool.idleCount);
  }
  store = { ...store, keys: withKeyCache(store.keys) };
  const opened = store;
  stops.onStop(() => opened.close());
  // Idempotency keys are forgotten after a day (see api/idempotency.ts), ended windows and bans hourly.
  stops.onStop(hourly(() => opened.idempotency.prune(Date.now() - idempotencyWindowMs).catch(() => 0)));
  const databaseCounters = counters;
  stops.onStop(hourly(() => databaseCounters.sweep().catch(() => 0)));
  const close = () => stops.stop();
  if (redis) {
    const { connectRedis } = await import('./redis/connect.js');
    const { redisCounters } = await import('./redis/counters.js');
    let client: Awaited<ReturnType<typeof connectRedis>>;
    try {
      client = await connectRedis(redis, logger);
    } catch (error) {
      await close().catch(() => {});
      throw error;
    }
    stops.onStop(() => client.disconnect());
    const shared = redisCounters(client, redis, logger);
    stops.onStop(shared.stop);
    if (redis.address.topology === 'sentinel') {
      const { watchFailovers } = await import('./redis/failovers.js');
      stops.onStop(await watchFailovers(redis.address, shared.failover));
    }
    counters = shared.counters;
    stops.onStop(hourly(() => shared.counters.sweep())); // its per-instance fallback
    degraded = () => {
      const reason = shared.degraded();
      return reason && `Redis unreachable (${reason}): rate limits are per instance`;
    };
  }
  return { store, counters, name: backendName(database, redis), close, degraded, waiting };
}
