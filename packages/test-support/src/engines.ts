// The machine's PostgreSQL and Redis, as the suites that need them find them (TEST_POSTGRES_URL,
// TEST_REDIS_URL): read by the server's and the console's vitest configurations, which run their
// engine projects only where an engine answers.
import { createConnection } from 'node:net';

const reachable = (url: URL, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: url.hostname, port: Number(url.port || port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });

// Read when asked, not when this module loads: a vitest project sets them in its environment (PgBouncer's
// TEST_POSTGRES_URL), and a worker keeps this package loaded from one project's file to the next.
/** The PostgreSQL the suites create their databases on: TEST_POSTGRES_URL, else the machine's. */
export const testPostgresUrl = (): string =>
  process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** The Redis the suites use: TEST_REDIS_URL, else the machine's. */
export const testRedisUrl = (): string => process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * How the suites name their PostgreSQL databases and Redis key prefixes: TEST_STORE_PREFIX (lower-case
 * letters, digits and underscores), so that several checkouts or CI jobs can share one server.
 */
export function testStorePrefix(): string {
  const prefix = process.env.TEST_STORE_PREFIX ?? 'animal_store_test';
  if (!/^[a-z_][a-z0-9_]{0,40}$/.test(prefix)) {
    throw new Error(`TEST_STORE_PREFIX must be 1-41 lower-case letters, digits or underscores: ${prefix}`);
  }
  return prefix;
}

/**
 * Whether PostgreSQL and Redis answer, with their URLs. One that does not is one line on stderr saying how
 * to enable the suites that need it; under CI=true it is a failure instead (CI runs every suite).
 */
export async function testEngines() {
  const postgresUrl = new URL(testPostgresUrl());
  const redisUrl = new URL(testRedisUrl());
  const [postgres, redis] = await Promise.all([reachable(postgresUrl, 5432), reachable(redisUrl, 6379)]);
  const missing = [
    !postgres &&
      `PostgreSQL at ${postgresUrl.host} (set TEST_POSTGRES_URL, or start it: pg_ctlcluster 15 main start)`,
    !redis && `Redis at ${redisUrl.host} (set TEST_REDIS_URL, or start it: redis-server --daemonize yes)`,
  ].filter(Boolean);
  if (missing.length && process.env.CI)
    throw new Error(`CI needs every engine; unreachable: ${missing.join('; ')}`);
  for (const line of missing) process.stderr.write(`skipping the suites that need ${line}\n`);
  return { postgres, redis, postgresUrl, redisUrl };
}

/**
 * The timeouts of suites that start processes, engines and browsers. expect.poll waits for a state to come
 * (a change in force, a page's next read, a log line), never bounds how soon: 10 s, not vitest's 1 s, which
 * a console page's read after an action overran beside a second suite ("banned until" still shown 1 s after
 * the unban). Bounds are asserted as bounds, in their tests.
 */
export const processSuiteTimeouts = {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  expect: { poll: { timeout: 10_000 } },
};
