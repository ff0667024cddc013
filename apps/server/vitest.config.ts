// The server's tests, as three projects: everything on SQLite, and the HTTP suites again on PostgreSQL and
// on PostgreSQL + Redis (TEST_BACKEND, read by test/backends.ts). An engine that cannot be reached skips
// its project with one line saying how to enable it; under CI it is a failure instead.
import { createConnection } from 'node:net';
import { defineConfig } from 'vitest/config';

const postgresUrl = new URL(process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
const redisUrl = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');

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

/** The suites that drive the HTTP surface, the limiter's leases and the counters: these run on every backend. */
const httpSuites = [
  'test/admin/*.test.ts',
  'test/admin-hostile.test.ts',
  'test/auth.test.ts',
  'test/billing.test.ts',
  'test/counters.test.ts',
  'test/leases.test.ts',
  'test/hardening.test.ts',
  'test/http-server.test.ts',
  'test/id-filter-and-idempotency.test.ts',
  'test/pagination.test.ts',
  'test/pets.test.ts',
  'test/pet-fields.test.ts',
  'test/rate-limit.test.ts',
  'test/routing.test.ts',
  'test/tracing.test.ts',
  'test/scale-out.test.ts',
  'test/outage.test.ts',
  'test/postgres-faults.test.ts',
  'test/partitions.test.ts',
  'test/reverse-proxy.test.ts',
];

async function engines() {
  const [postgres, redis] = await Promise.all([reachable(postgresUrl, 5432), reachable(redisUrl, 6379)]);
  const missing = [
    !postgres &&
      `PostgreSQL at ${postgresUrl.host} (set TEST_POSTGRES_URL, or start it: pg_ctlcluster 15 main start)`,
    !redis && `Redis at ${redisUrl.host} (set TEST_REDIS_URL, or start it: redis-server --daemonize yes)`,
  ].filter(Boolean);
  if (missing.length && process.env.CI)
    throw new Error(`CI needs every engine; unreachable: ${missing.join('; ')}`);
  for (const line of missing) process.stderr.write(`skipping the suites that need ${line}\n`);
  return { postgres, redis };
}

export default defineConfig(async () => {
  const { postgres, redis } = await engines();
  const project = (name: string, include: string[]) => ({
    extends: true as const,
    test: { name, include, env: { TEST_BACKEND: name } },
  });
  return {
    test: {
      testTimeout: 60_000,
      hookTimeout: 60_000,
      projects: [
        project('sqlite', ['src/**/*.test.ts', 'test/**/*.test.ts']),
        ...(postgres ? [project('postgres', httpSuites)] : []),
        ...(postgres && redis ? [project('postgres+redis', httpSuites)] : []),
      ],
    },
  };
});
