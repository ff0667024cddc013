// The server's tests, as projects: the unit tests beside the sources, every suite on SQLite, the HTTP suites
// again on PostgreSQL and on PostgreSQL + Redis (TEST_BACKEND, read by test/support/backends.ts), most of them
// through PgBouncer in transaction mode, and on Redis Sentinel and Redis Cluster (each started by the
// project). An engine or a program that cannot be reached skips its project with one line saying how to
// enable it; under CI it is a failure instead.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { processSuiteTimeouts, testEngines } from '@animal-store/test-support';
import { configDefaults, defineConfig } from 'vitest/config';
import { OwnEnginesFirst } from './test/support/sequencer.js';

// Which engines a suite runs on is decided by its folder under test/, not by a list kept by hand (a new
// suite runs where its folder says; one left in no folder cannot exist):
// - every-topology/: the limits, leases, counters, bans and usage across instances, the admin API, the
//   failovers: what Redis decides. On SQLite, PostgreSQL, PostgreSQL + Redis, through PgBouncer, and on
//   Redis Sentinel and Redis Cluster.
// - every-engine/: the HTTP surface, stored data, connections: the same on any Redis. Every engine but the
//   Redis topologies.
// - engine-faults/: suites that drive PostgreSQL itself or a Redis of their own (kill, cut, stall, time its
//   statements): not through PgBouncer, whose connect_query and pooling change what they observe
//   (docs/scaling-out.md says why).
// - sqlite-only/: the process, its command line and what an operator sees: on SQLite.
// - own-engines/: suites that start the engines they need (the rolling upgrade, the alert rules): once.
// - image/: the container image, a project of its own run after every other.
// - support/: the helpers.
const folder = (name: string) => `test/${name}/**/*.test.ts`;
const loose = readdirSync(new URL('test/', import.meta.url)).filter((name) => name.endsWith('.test.ts'));
if (loose.length > 0)
  throw new Error(`test/ holds suites outside a folder (${loose.join(', ')}): put each in one`);
const topologySuites = [folder('every-topology')];
const pooledSuites = [...topologySuites, folder('every-engine')];
const httpSuites = [...pooledSuites, folder('engine-faults')];

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

/** The container image's suites: a project of their own, run last. */
const imageSuite = folder('image');

export default defineConfig(async () => {
  const { postgres, redis, postgresUrl } = await testEngines();
  // Every project isolates its files (a new module graph for each). Without isolation the suites under test/
  // took 12–23 % less time and CPU (the four Redis and PgBouncer projects 383 → 338 s, the Node lines'
  // SQLite suites 124 → 96 s), but three clean-clone rehearsals then failed three different timed tests
  // (a forced Sentinel failover losing admissions, a pool told 1 s after its window was used, 14 × 503 of
  // 200 concurrent requests): the same work packed into less time, and a file's leftovers in a shared worker
  // loading the servers a later file runs in that process. Kept until those bounds hold under that load.
  const project = (name: string, include: string[]) => ({
    extends: true as const,
    test: { name, include, env: { TEST_BACKEND: name } },
  });
  const bouncer = postgres ? tool('pgbouncer', 'pgbouncer', 'the suites through PgBouncer') : undefined;
  let pooled: object[] = [];
  if (bouncer) {
    // The project's PgBouncer (test/support/pgbouncer-setup.ts) listens here, in front of TEST_POSTGRES_URL's server
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
          globalSetup: ['test/support/pgbouncer-setup.ts'],
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
            globalSetup: ['test/support/redis-topology-setup.ts'],
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
      sequence: { sequencer: OwnEnginesFirst },
      ...processSuiteTimeouts,
      projects: [
        // The unit tests beside the sources, a project of their own (`--project unit` runs them alone). They
        // need isolation whatever the others do: some mock node:crypto or count a shared validator's calls.
        {
          extends: true as const,
          test: { name: 'unit', include: ['src/**/*.test.ts'], env: { TEST_BACKEND: 'sqlite' } },
        },
        {
          extends: true as const,
          test: {
            name: 'sqlite',
            include: ['test/**/*.test.ts'],
            exclude: [...configDefaults.exclude, imageSuite],
            env: { TEST_BACKEND: 'sqlite' },
          },
        },
        ...(postgres ? [project('postgres', httpSuites)] : []),
        ...(postgres && redis ? [project('postgres+redis', httpSuites)] : []),
        ...pooled,
        ...(postgres ? topologies : []),
        // The container image: built from the start of the run at the lowest CPU priority, under the other
        // suites (support/image-setup.ts); its files run after every other suite, so that their containers
        // never load a suite's timing, and side by side (the image, the upgrade, compose, compose with
        // Sentinel): one after the other they took 291 s where side by side they take 142 s.
        {
          extends: true as const,
          test: {
            name: 'container',
            include: [imageSuite],
            globalSetup: ['test/support/image-setup.ts'],
            sequence: { groupOrder: 1 },
          },
        },
      ],
    },
  };
});
