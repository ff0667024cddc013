// The engines the HTTP suites run on, chosen per vitest project by TEST_BACKEND (sqlite, postgres,
// postgres+redis; see vitest.config.ts), and for Redis its topology: one server (TEST_REDIS_URL), or the
// Sentinels or Cluster the project started (test/support/redis-topology-setup.ts). Each test store is new and
// private: a temporary SQLite file, a PostgreSQL database created for it (dropped after the file's tests),
// a Redis key prefix of its own.
import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import { tempDatabase, testPostgresUrl, testRedisUrl, testStorePrefix } from '@animal-store/test-support';
import type { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, expect, inject } from 'vitest';
import { parseRedisUrl } from '../../src/redis-url.js';
import { connectRedis, type RedisClient } from '../../src/store/redis/connect.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set by the Sentinel and Cluster projects' set-up: where their Redis is. */
    redisUrl?: string;
    redisTopology?: 'sentinel' | 'cluster';
  }
}

export type BackendName = 'sqlite' | 'postgres' | 'postgres+redis';
export const backend = (process.env.TEST_BACKEND ?? 'sqlite') as BackendName;
export const postgresUrl = testPostgresUrl();
export const redisTopology = inject('redisTopology') ?? 'single';
export const redisUrl = inject('redisUrl') ?? testRedisUrl();

/** A client of the test's own to the Redis at `url` (any topology), as the service connects. */
export const redisClient = (url = redisUrl): Promise<RedisClient> =>
  connectRedis(
    { address: parseRedisUrl(url), keyPrefix: '', commandTimeoutMs: 5_000 },
    pino({ enabled: false }),
  );

/** Deletes every key starting with `prefix`, on every primary of a Cluster. */
export async function deleteKeys(client: RedisClient, prefix: string): Promise<void> {
  const primaries = client.isCluster ? (client as Cluster).nodes('master') : [client as Redis];
  for (const node of primaries) {
    const keys = await node.keys(`${prefix}*`);
    await Promise.all(keys.map((key) => client.del(key))); // one key each: a Cluster refuses cross-slot DEL
  }
}

/** Where one test server keeps its data, as the environment a server process reads. */
export type TestStore = {
  DATABASE_URL: string;
  DATABASE_POOL_SIZE?: string;
  REDIS_URL?: string;
  REDIS_KEY_PREFIX?: string;
};

/**
 * The PostgreSQL connections each test server's pool may hold (at 10, the default, 66 tests of a second
 * run beside one failed with "too many clients already"). Each connection names its suite
 * (application_name below): with PgBouncer's idle server connections closed after a second
 * (pgbouncer.ts), two full runs side by side peaked at 31 connections between them (one alone had
 * peaked at 71, most of them PgBouncer's idle ones).
 */
const testPoolSize = '3';

/** How the tests name their PostgreSQL databases and Redis key prefixes (TEST_STORE_PREFIX). */
export const storePrefix = testStorePrefix();

const created: { database?: string; prefix?: string }[] = [];

/**
 * Creating and dropping the test databases goes to the server itself, not through the project's PgBouncer
 * (TEST_PGBOUNCER_SERVER): through it, a drop waited on the pooler's own connections to the database and
 * ran into the statement timeout the pooler sets (CI, on a loaded machine).
 */
const serverUrl = process.env.TEST_PGBOUNCER_SERVER ?? postgresUrl;

const withPostgres = async <T>(run: (client: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
};

/** A new, empty store on this project's backend (for a process, or for startServer's `store`). */
export async function freshStore(engine: BackendName = backend): Promise<TestStore> {
  if (engine === 'sqlite') return { DATABASE_URL: tempDatabase() };
  const name = `${storePrefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withPostgres((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  // Each connection names the suite that made it (pg_stat_activity's application_name), so that a count
  // of what one run holds on the server can say whose connections they are.
  url.searchParams.set('application_name', basename(expect.getState().testPath ?? 'test').slice(0, 63));
  const entry: (typeof created)[number] = { database: name };
  created.push(entry);
  const pooled = { DATABASE_URL: url.toString(), DATABASE_POOL_SIZE: testPoolSize };
  if (engine === 'postgres') return pooled;
  entry.prefix = `${name}:`;
  return { ...pooled, REDIS_URL: redisUrl, REDIS_KEY_PREFIX: entry.prefix };
}

/**
 * How many sessions drop a file's databases. PostgreSQL 15's DROP DATABASE waits for an immediate checkpoint
 * of its own, a flush of every dirty page of the server: one after another, twenty drops waited for twenty
 * checkpoints, over the 60 s hook timeout while the other suites wrote. Drops waiting together share one.
 */
const dropSessions = 6;

/** Drops what freshStore created for this test file (databases, Redis keys). */
afterAll(async () => {
  const entries = created.splice(0);
  if (entries.length === 0) return;
  const databases = entries.flatMap((e) => (e.database ? [e.database] : []));
  await Promise.all(
    Array.from({ length: Math.min(dropSessions, databases.length) }, (_, session) =>
      withPostgres(async (client) => {
        for (let i = session; i < databases.length; i += dropSessions) {
          await client.query(`DROP DATABASE IF EXISTS ${databases[i]} WITH (FORCE)`);
        }
      }),
    ),
  );
  const prefixes = entries.flatMap((e) => (e.prefix ? [e.prefix] : []));
  if (prefixes.length === 0) return;
  const redis = await redisClient();
  try {
    for (const prefix of prefixes) await deleteKeys(redis, prefix);
  } finally {
    redis.disconnect();
  }
}, 180_000); // a checkpoint takes what the server's load makes it

/** A connection of the test's own to a store, for reading and writing behind the API's back. */
export async function rawSql(location: TestStore) {
  if (!/^postgres/.test(location.DATABASE_URL)) {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(location.DATABASE_URL, { timeout: 5_000 });
    return {
      async query(text: string, params: unknown[]): Promise<unknown[]> {
        const statement = db.prepare(text);
        if (statement.reader) return statement.all(...params);
        statement.run(...params);
        return [];
      },
      async close() {
        db.close();
      },
    };
  }
  // Connected on the first statement: most test servers never run one, and each connection counts
  // against the server's max_connections, which another checkout's run may be sharing.
  let client: pg.Client | undefined;
  const connected = async () => {
    if (client) return client;
    client = new pg.Client({ connectionString: location.DATABASE_URL });
    client.on('error', () => {}); // the database may be dropped under it at the end of the file
    await client.connect();
    return client;
  };
  return {
    async query(text: string, params: unknown[]): Promise<unknown[]> {
      let n = 0;
      // SQLite's `?` placeholders and explicit ids (an identity column refuses them without OVERRIDING).
      const sql = text
        .replace(/\?/g, () => `$${++n}`)
        .replace(
          /^INSERT INTO pets \(id, (.*?)\) VALUES/i,
          'INSERT INTO pets (id, $1) OVERRIDING SYSTEM VALUE VALUES',
        );
      return (await (await connected()).query(sql, params)).rows;
    },
    async close() {
      await client?.end();
    },
  };
}
