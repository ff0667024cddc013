// Every contestant of a bench run, started on the stores run.ts seeded: this tree's server (profiled with
// --profile), bare Express, validated Express, the floor, the usual Express and Fastify stacks; the same
// server with two workers and traced (every trace, a tenth); --against's server; the --backend servers.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type earlierServer, seedThroughApi } from './against.js';
import { pets, start } from './contestants.js';
import type { Target } from './measure.js';
import { serverEntry, serverFlags } from './server-command.js';

/** The server with WORKERS=2 on PostgreSQL + Redis: each worker takes its own leases and pings Redis. */
export const redisWorkers = 'postgres+redis WORKERS=2';
/**
 * This tree's servers never ban the limited key while it is driven past its limit (10 s at thousands a
 * second stays far below the threshold's ceiling): the refusal measured is `rate_limited`, the one that
 * reads and counts, not a ban's (answered from memory since 1.x).
 */
const neverBans = { RATE_LIMIT_BAN_THRESHOLD: '1000000' };
const built = (name: string) => fileURLToPath(new URL(`../dist/${name}.js`, import.meta.url));

type Stores = {
  /** The seeded SQLite file, and the folder --against's store goes in. */
  databasePath: string;
  dir: string;
  /** The seeded PostgreSQL database and the bench's Redis, with --backend. */
  pgUrl: string;
  redisUrl: string;
  /** Each target's key (a target not named: the SQLite one), and its limited key where it has one. */
  headersOf: Map<string, string>;
  limitedOf: Map<string, string>;
  authorization: string;
};
type Choices = {
  profile: string[];
  against: string | undefined;
  earlier: ReturnType<typeof earlierServer> | undefined;
  backends: string[];
};

/** Starts every contestant; `inOrder`, the order a round drives them. */
export async function lineUp(stores: Stores, { profile, against, earlier, backends }: Choices) {
  const { databasePath, headersOf } = stores;
  const headerOf = (name: string) => headersOf.get(name) ?? stores.authorization;
  const launch = (
    name: string,
    args: string[],
    env: Record<string, string> = { DATABASE_URL: databasePath },
  ) => start(name, args, env, headerOf(name));
  const server = await launch('server', [...serverFlags, ...profile, serverEntry], {
    DATABASE_URL: databasePath,
    ...neverBans,
  });
  const bare = await launch('bare-express', [built('bare-express')]);
  const validated = await launch('validated Express', [built('validated-express')]);
  const floor = await launch('floor', [built('floor')]);
  const peers = [
    await launch('usual Express', [built('usual-express')]),
    await launch('Fastify', [built('fastify-stack')]),
  ];
  // A collector for the traced server: an OTLP/HTTP endpoint that takes every export and keeps nothing.
  const collector = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  collector.listen(0, '127.0.0.1');
  await once(collector, 'listening');
  const tracing = {
    DATABASE_URL: databasePath,
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
  };
  // The same server as a cluster of two workers (WORKERS=2), on the same file: what the second core adds;
  // and with OpenTelemetry on, every trace sampled (the SDK's default) and a tenth of them.
  const extra: Target[] = [
    await launch('WORKERS=2', [...serverFlags, serverEntry], { DATABASE_URL: databasePath, WORKERS: '2' }),
    await launch('traced', [...serverFlags, serverEntry], tracing),
    await launch('traced 10 %', [...serverFlags, serverEntry], {
      ...tracing,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
    }),
  ];
  extra.push(...(await earlierAndEngines(stores, { profile, against, earlier, backends }, launch)));
  // The --against server right after this tree's in every round, so that the machine's drift between the
  // two (a shared VM's steal comes and goes over tens of seconds) is the least it can be; the ratio is the
  // median of the rounds' own ratios.
  const inOrder = [
    server,
    ...extra.filter((e) => e.name === against),
    ...peers,
    bare,
    validated,
    floor,
    ...extra.filter((e) => e.name !== against),
  ];
  return { server, bare, floor, extra, collector, inOrder, headerOf };
}

type Launch = (name: string, args: string[], env?: Record<string, string>) => Promise<Target>;

/** --against's server, and the --backend servers (PostgreSQL + Redis also with two workers). */
async function earlierAndEngines(
  stores: Stores,
  { profile, against, earlier, backends }: Choices,
  launch: Launch,
): Promise<Target[]> {
  const { headersOf, limitedOf } = stores;
  const started: Target[] = [];
  // --against: the earlier commit's server on a store of its own, seeded alike through its keys command and API.
  if (against !== undefined && earlier) {
    const databaseUrl = join(stores.dir, 'against.db');
    headersOf.set(against, `Bearer ${earlier.key(databaseUrl)}`);
    limitedOf.set(against, `Bearer ${earlier.key(databaseUrl, 1)}`);
    const target = await launch(against, earlier.args(profile), { DATABASE_URL: databaseUrl, ...neverBans });
    await seedThroughApi(target.url, headersOf.get(against) as string, pets);
    started.push(target);
  }
  for (const b of backends) {
    headersOf.set(b, headersOf.get('postgres') as string);
    const env: Record<string, string> = {
      DATABASE_URL: stores.pgUrl,
      ...(b === 'postgres+redis' && {
        REDIS_URL: stores.redisUrl,
        REDIS_KEY_PREFIX: `bench:${process.pid}:`,
      }),
      ...neverBans,
    };
    started.push(await launch(b, [...serverFlags, ...profile, serverEntry], env)); // profiled too, with --profile
    if (b === 'postgres+redis') {
      headersOf.set(redisWorkers, headersOf.get(b) as string);
      started.push(await launch(redisWorkers, [...serverFlags, serverEntry], { ...env, WORKERS: '2' }));
    }
  }
  return started;
}
