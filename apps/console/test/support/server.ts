// The console's suites drive the real service: the built server (apps/server/dist; turbo.json builds it before
// these tests) as a child process with its admin listener, on a store of this project's engine (TEST_BACKEND,
// set by vitest.config.ts): a temporary SQLite file, or a PostgreSQL database and a Redis key prefix of the
// suite's own, dropped after it.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import {
  type ServerProcess,
  startServerProcess,
  tempDatabase,
  testPostgresUrl,
  testRedisUrl,
  testStorePrefix,
} from '@animal-store/test-support';
import { Redis } from 'ioredis';
import pg from 'pg';

const serverDist = fileURLToPath(new URL('../../../server/dist/', import.meta.url));
const postgresUrl = testPostgresUrl();
const redisUrl = testRedisUrl();

export const backend = (process.env.TEST_BACKEND ?? 'sqlite') as 'sqlite' | 'postgres+redis';

async function onPostgres(statement: string) {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A new store for one server, and how to drop it. */
async function scratchStore(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (backend === 'sqlite') return { env: { DATABASE_URL: tempDatabase() }, drop: async () => {} };
  const name = `${testStorePrefix()}_console_${process.pid}_${randomBytes(4).toString('hex')}`;
  await onPostgres(`CREATE DATABASE ${name}`);
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  const prefix = `${name}:`;
  return {
    env: {
      DATABASE_URL: url.toString(),
      DATABASE_POOL_SIZE: '3',
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: prefix,
    },
    async drop() {
      await onPostgres(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await redis.connect();
      try {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
      } finally {
        redis.disconnect();
      }
    },
  };
}

export type ConsoleServer = Omit<ServerProcess, 'adminUrl' | 'stop'> & {
  adminUrl: string;
  stop(): Promise<void>;
};

/** The server with its admin listener (`adminTokens`, `name:token` each), more configuration in `env`. */
export async function startConsoleServer(
  adminTokens: string[],
  env: Record<string, string> = {},
): Promise<ConsoleServer> {
  const store = await scratchStore();
  try {
    const server = await startServerProcess(serverDist, {
      NODE_ENV: 'test',
      ...store.env,
      ADMIN_PORT: '0',
      ADMIN_TOKENS: adminTokens.join(','),
      ...env,
    });
    return {
      ...server,
      adminUrl: server.adminUrl as string,
      async stop() {
        await server.stop();
        await store.drop();
      },
    };
  } catch (error) {
    await store.drop();
    throw error;
  }
}
