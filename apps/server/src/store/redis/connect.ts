// Connecting to Redis before the service answers anything: a request served before the connection is ready
// would fall back to per-instance memory, where a ban of record in Redis is not seen.
import type { Redis } from 'ioredis';
import type { RedisConfig } from '../../config.js';
import { StoreOpenError } from '../open-error.js';

/** How long one connection attempt may take (TCP, and TLS with rediss://) before the next one. */
const reconnectTimeoutMs = 2_000;

/**
 * The connected client. Unreachable at start is a configuration error (StoreOpenError naming REDIS_URL);
 * lost later, the counters fall back to memory (counters.ts).
 */
export async function connectRedis({ url, commandTimeoutMs }: RedisConfig): Promise<Redis> {
  // No offline queue and no resending: a request must not wait behind a dead connection (counters.ts falls
  // back instead). A connection that leaves a command unanswered for the command timeout is destroyed and
  // replaced (socketTimeout): after a silent partition TCP would resume it only after its back-off, tens
  // of seconds. Reconnection tries at least once a second, each connect given reconnectTimeoutMs.
  const { Redis } = await import('ioredis');
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    lazyConnect: true,
    connectTimeout: reconnectTimeoutMs,
    commandTimeout: commandTimeoutMs, // a stalled Redis (connected, silent) fails fast, like a lost one
    socketTimeout: commandTimeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
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
