// Connecting to Redis before the service answers anything: a request served before the connection is ready
// would fall back to per-instance memory, where a ban of record in Redis is not seen.
import type { Redis } from 'ioredis';
import type { RedisConfig } from '../../config.js';
import { StoreOpenError } from '../open-error.js';

/**
 * The connected client. Unreachable at start is a configuration error (StoreOpenError naming REDIS_URL);
 * lost later, the counters fall back to memory (counters.ts).
 */
export async function connectRedis({ url, commandTimeoutMs }: RedisConfig): Promise<Redis> {
  // No offline queue and one retry: a request must not wait behind a dead connection (see counters.ts).
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
