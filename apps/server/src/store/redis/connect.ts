// Connecting to Redis before the service answers anything: a request served before the connection is ready
// would fall back to per-instance memory, where a ban of record in Redis is not seen. One server, the
// primary Sentinels name, or a Cluster (redis-url.ts); the counters use any of them alike (one key per
// command or script: docs/decisions.md#redis-topologies).
import type { Cluster, Redis, RedisOptions, SentinelAddress, SentinelConnector } from 'ioredis';
import type { Logger } from 'pino';
import type { RedisConfig } from '../../config.js';
import { redisHosts } from '../../redis-url.js';
import { StoreOpenError } from '../open-error.js';

/** How long one connection attempt may take (TCP, and TLS with rediss://) before the next one. */
const reconnectTimeoutMs = 2_000;
/**
 * How long a start waits for Redis in all (docs/failures.md: the "cannot be reached" line within 5 s).
 * ioredis gives up on one server after connectTimeout, but asks Sentinels that are absent or silent again
 * and again: a start under them waited with no line (90 s and more).
 */
const startDeadlineMs = 5_000;

/**
 * ioredis's Sentinel connector, with an error listener on every Sentinel client it makes: a refusing
 * Sentinel is one `warn` line per Sentinel until it answers again, once the start is over (`started`: a
 * start that cannot reach Redis says so in its one line), never ioredis's own stderr.
 * Written by hand: docs/decisions.md#sentinel-clients
 */
function sentinelConnector(
  ioredis: { SentinelConnector: typeof SentinelConnector },
  logger: Logger,
  started: () => boolean,
): RedisOptions['Connector'] {
  const failing = new Set<string>();
  return function Connector(options: unknown) {
    const connector = new ioredis.SentinelConnector(
      options as ConstructorParameters<typeof SentinelConnector>[0],
    );
    type MakeClient = (endpoint: Partial<SentinelAddress>, more?: Partial<RedisOptions>) => Redis;
    const make = (Reflect.get(connector, 'connectToSentinel') as MakeClient).bind(connector);
    const quiet: MakeClient = (endpoint, more) => {
      const client = make(endpoint, more);
      const where = `${endpoint.host ?? '127.0.0.1'}:${endpoint.port ?? 26379}`;
      client.on('error', (error: Error) => {
        if (failing.has(where) || !started()) return;
        failing.add(where);
        logger.warn(
          { sentinel: where, reason: error.message },
          'a Sentinel cannot be reached; the others are asked',
        );
      });
      client.on('ready', () => failing.delete(where));
      return client;
    };
    Reflect.set(connector, 'connectToSentinel', quiet);
    return connector;
  } as unknown as RedisOptions['Connector'];
}

/** ioredis, loaded when Redis is configured (a start without it never loads it). */
const loadIoredis = () => import('ioredis');

/** A client of any topology: the commands the counters send are the same. */
export type RedisClient = Redis | Cluster;

/**
 * The connected client. Unreachable at start is a configuration error (StoreOpenError naming REDIS_URL);
 * lost later, the counters fall back to memory (counters.ts).
 */
export async function connectRedis(config: RedisConfig, logger: Logger): Promise<RedisClient> {
  const ioredis = await loadIoredis();
  let started = false;
  const client = newClient(ioredis, config, logger, () => started);
  await ready(client, config.address);
  started = true;
  return client;
}

/** A client of the configured topology, not connected yet (`started`: whether the start is over). */
function newClient(
  ioredis: Awaited<ReturnType<typeof loadIoredis>>,
  { address, commandTimeoutMs }: RedisConfig,
  logger: Logger,
  started: () => boolean,
): RedisClient {
  // No offline queue and no resending: a request must not wait behind a dead connection (counters.ts falls
  // back instead). A connection that leaves a command unanswered for the command timeout is destroyed and
  // replaced (socketTimeout): after a silent partition TCP would resume it only after its back-off, tens
  // of seconds. Reconnection tries at least once a second, each connect given reconnectTimeoutMs.
  const credentials = {
    ...(address.username && { username: address.username }),
    ...(address.password && { password: address.password }),
    ...(address.tls && { tls: {} }),
  };
  const connection: RedisOptions = {
    maxRetriesPerRequest: 0,
    connectTimeout: reconnectTimeoutMs,
    commandTimeout: commandTimeoutMs, // a stalled Redis (connected, silent) fails fast, like a lost one
    socketTimeout: commandTimeoutMs,
    // A primary demoted under a connection (a failover) answers writes with READONLY: reconnect, which
    // asks the Sentinels (or the Cluster) where the primary is now.
    reconnectOnError: (error) => (/^READONLY/.test(error.message) ? 1 : false),
  };
  const retryStrategy = (attempt: number) => Math.min(attempt * 100, 1_000);
  if (address.topology === 'cluster') {
    return new ioredis.Cluster(address.nodes, {
      enableOfflineQueue: false,
      lazyConnect: true,
      redisOptions: { ...connection, ...credentials },
      clusterRetryStrategy: retryStrategy,
      // A moved slot or a failover in progress is retried within the command timeout, not reported.
      retryDelayOnMoved: 0,
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
      slotsRefreshTimeout: reconnectTimeoutMs,
    });
  }
  const common = {
    ...connection,
    ...credentials,
    enableOfflineQueue: false,
    lazyConnect: true,
    retryStrategy,
  };
  return address.topology === 'sentinel'
    ? new ioredis.Redis({
        ...common,
        sentinels: address.sentinels,
        name: address.primaryName,
        role: 'master',
        ...(address.sentinelUsername && { sentinelUsername: address.sentinelUsername }),
        ...(address.sentinelPassword && { sentinelPassword: address.sentinelPassword }),
        ...(address.tls && { enableTLSForSentinelMode: true, sentinelTLS: {} }),
        sentinelRetryStrategy: retryStrategy,
        // A Sentinel that is connected and answers nothing (stopped, overloaded) is given up on, and the
        // next one asked: else a move to a new primary waited on it for as long as it stayed silent
        // (the instances stayed degraded: 72 s measured from outside, 15 s+ in the test on a loaded
        // machine). Never under 2 s: a slow Sentinel is not a silent one.
        sentinelCommandTimeout: Math.max(2_000, commandTimeoutMs),
        // Subscribed to the Sentinels' +switch-master: a failover moves the connection at once, not
        // at the old primary's first refusal or silence.
        failoverDetector: true,
        Connector: sentinelConnector(ioredis, logger, started),
      })
    : new ioredis.Redis(address.url, common);
}

/** Waits for the client to be ready within the start's deadline; else disconnects it and says why. */
async function ready(client: RedisClient, address: RedisConfig['address']): Promise<void> {
  let reason: string | undefined;
  let deadline: NodeJS.Timeout | undefined;
  let refused: (() => void) | undefined;
  const noted = (error: Error) => {
    reason = error.message;
    if (/^(WRONGPASS|NOAUTH)/.test(reason)) refused?.(); // credentials do not mend themselves by waiting
  };
  client.on('error', noted);
  try {
    // Ready within the start's deadline, however many tries it takes: a first try that fails (a Redis
    // still starting beside the service, a Cluster whose slot refresh timed out on a busy machine) is
    // retried by ioredis's own strategy; connect() rejects that first try only.
    await new Promise<void>((resolve, reject) => {
      refused = () => reject(new Error(reason));
      deadline = setTimeout(refused, startDeadlineMs);
      client.once('ready', resolve);
      client.connect().catch((error: Error) => {
        reason ??= error.message;
      });
    });
  } catch {
    client.disconnect();
    throw new StoreOpenError(
      `REDIS_URL: Redis at ${redisHosts(address)} cannot be reached (${reason ?? 'connection closed'}); check that it is running and reachable, and the URL.`,
    );
  } finally {
    clearTimeout(deadline);
    client.off('error', noted);
  }
}
