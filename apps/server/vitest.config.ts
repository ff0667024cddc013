// The server's tests, as six projects: everything on SQLite, the HTTP suites again on PostgreSQL and on
// PostgreSQL + Redis (TEST_BACKEND, read by test/backends.ts), most of them through PgBouncer in
// transaction mode, and on Redis Sentinel and Redis Cluster (each started by the project). An engine or a program that cannot be reached skips its project with one line saying
// how to enable it; under CI it is a failure instead.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { configDefaults, defineConfig } from 'vitest/config';

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
  'test/quota-spread.test.ts',
  'test/routing.test.ts',
  'test/tracing.test.ts',
  'test/scale-out.test.ts',
  'test/outage.test.ts',
  'test/postgres-faults.test.ts',
  'test/partitions.test.ts',
  'test/reverse-proxy.test.ts',
  'test/redis-tls.test.ts',
];

/**
 * The HTTP suites that run through PgBouncer too. Not these, which drive PostgreSQL itself or time its
 * statements (docs/scaling-out.md says why): postgres-faults (terminates backends, restarts the server: a
 * pooler in between changes what it observes), partitions (a private cluster), outage (locks held past a
 * statement timeout of its own choosing; through PgBouncer the timeout is the pooler's connect_query),
 * tracing (counts the pg spans of one connection's statements).
 */
const pooledSuites = httpSuites.filter((suite) => !/postgres-faults|partitions|outage|tracing/.test(suite));

/**
 * The suites that run on Redis Sentinel and on Redis Cluster too: those whose outcome Redis decides (the
 * limits, leases and counters, bans and usage across instances, the admin API's windows), and the failover
 * tests. The others exercise PostgreSQL or HTTP alone (the same on any Redis), or a Redis of their own
 * (outage, partitions: a single server they kill or cut).
 */
const topologySuites = [
  'test/admin/*.test.ts',
  'test/billing.test.ts',
  'test/counters.test.ts',
  'test/leases.test.ts',
  'test/rate-limit.test.ts',
  'test/quota-spread.test.ts',
  'test/scale-out.test.ts',
  'test/redis-failover.test.ts',
];

/** A Debian program's path, or undefined after one line saying how to get it (under CI: a failure). */
function tool(command: string, debianPackage: string, suites: string): string | undefined {
  const found = [`/usr/sbin/${command}`, `/usr/bin/${command}`].find((path) => existsSync(path));
  if (found) return found;
  try {
    return execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    const line = `${command} is missing: apt-get install ${debianPackage} (as root, \`pnpm test\` installs it itself)`;
    if (process.env.CI) throw new Error(`CI runs every suite; ${line}`);
    process.stderr.write(`skipping ${suites}: ${line}\n`);
    return undefined;
  }
}

/** A TCP port free on loopback now, for PgBouncer to listen on. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

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

/** The container image's suite (test/container.test.ts): a project of its own, run last. */
const imageSuite = 'test/container.test.ts';

export default defineConfig(async () => {
  const { postgres, redis } = await engines();
  const project = (name: string, include: string[]) => ({
    extends: true as const,
    test: { name, include, env: { TEST_BACKEND: name } },
  });
  const bouncer = postgres ? tool('pgbouncer', 'pgbouncer', 'the suites through PgBouncer') : undefined;
  let pooled: object[] = [];
  if (bouncer) {
    // The project's PgBouncer (test/pgbouncer-setup.ts) listens here, in front of TEST_POSTGRES_URL's server
    // (chosen once: vitest reads this configuration more than once in a run).
    const port = Number(process.env.TEST_PGBOUNCER_PORT) || (await freePort());
    process.env.TEST_PGBOUNCER_PORT = String(port);
    process.env.TEST_PGBOUNCER_BIN = bouncer;
    process.env.TEST_PGBOUNCER_SERVER = postgresUrl.toString();
    const through = new URL(postgresUrl);
    through.hostname = '127.0.0.1';
    through.port = String(port);
    pooled = [
      {
        extends: true as const,
        test: {
          name: 'postgres+pgbouncer',
          include: pooledSuites,
          globalSetup: ['test/pgbouncer-setup.ts'],
          env: { TEST_BACKEND: 'postgres', TEST_POSTGRES_URL: through.toString() },
        },
      },
    ];
  }
  // The Sentinel and Cluster projects start their topology with the machine's redis-server.
  const topologies =
    redis && tool('redis-server', 'redis-server', 'the suites on Redis Sentinel and Cluster')
      ? ['postgres+sentinel', 'postgres+cluster'].map((name) => ({
          extends: true as const,
          test: {
            name,
            include: topologySuites,
            globalSetup: ['test/redis-topology-setup.ts'],
            env: { TEST_BACKEND: 'postgres+redis' },
          },
        }))
      : [];
  return {
    test: {
      // Three files at a time on any machine (vitest's default is one fewer than the cores: one on two).
      // The suites wait on processes, engines and clocks far more than they compute: on 2 cores every
      // project took 1,074 s one file at a time, 406 s three at a time.
      maxWorkers: 3,
      testTimeout: 60_000,
      hookTimeout: 60_000,
      projects: [
        {
          extends: true as const,
          test: {
            name: 'sqlite',
            include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
            exclude: [...configDefaults.exclude, imageSuite],
            env: { TEST_BACKEND: 'sqlite' },
          },
        },
        ...(postgres ? [project('postgres', httpSuites)] : []),
        ...(postgres && redis ? [project('postgres+redis', httpSuites)] : []),
        ...pooled,
        ...(postgres ? topologies : []),
        // The image's build takes both cores for a minute: alone, after every other suite, so that it
        // never loads a suite's timing (CI saw a Redis fallback under load admit a key twice).
        {
          extends: true as const,
          test: { name: 'container', include: [imageSuite], sequence: { groupOrder: 1 } },
        },
      ],
    },
  };
});
