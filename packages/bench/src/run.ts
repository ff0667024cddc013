// `pnpm bench` (options: `usage` below, or `pnpm bench --help`): the real
// server (built from this tree, with validation, rate limiting and logging on; also with OpenTelemetry on,
// every trace and a tenth of them, exporting to a collector here that keeps nothing) against what a user would
// pick instead for the same job (the usual Express stack, src/usual-express.ts; a Fastify stack,
// src/fastify-stack.ts), bare Express doing the floor's work (src/bare-express.ts), the same with the
// server's contract validation both ways and nothing else (src/validated-express.ts) and the framework-free
// floor (src/floor.ts), all on loopback over
// one SQLite file seeded with 1,000 pets and an enterprise key whose limits never interfere; autocannon
// drives them in alternation with the same connections and duration. With --backend, the same server on
// PostgreSQL (and Redis) is measured too, on the same data. Prints the tables and writes
// bench-results/<timestamp>.json, with what a request costs the shared stores on those engines (PostgreSQL
// transactions; Redis commands, on a redis-server of the bench's own). --profile runs the server under --cpu-prof (bench-results/profiles/) and
// writes a text summary beside each profile (src/profile-summary.ts). --scenario <text> keeps the scenarios
// whose name contains it ('refusal': a 429's cost against a 200's, on this tree's server).
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openBackend, openSqliteStore, type Store, UsageMeter, usageFlushMs } from '@animal-store/server';
import autocannon from 'autocannon';
import pg from 'pg';
import { pino } from 'pino';
import { commitOf, earlierServer, seedThroughApi } from './against.js';
import { goalTable, judge } from './goals.js';
import { benchRedis } from './private-redis.js';
import { layerBudgetUs, ourLayers, summarise } from './profile-summary.js';
import { root, serverFlags, serverMain } from './server-command.js';

const usage = `Usage: pnpm bench [options]

  --duration <s>        seconds each contestant is driven, per round (default 10)
  --connections <n>     autocannon connections (default 10)
  --rounds <n>          rounds of every contestant in turn; figures are medians (default 1)
  --scenario <text>     keep the scenarios whose name contains it (repeatable; 'refusal': the cost of a
                        429 against a 200's)
  --backend <engine>    postgres or postgres+redis, measured beside SQLite (repeatable)
  --profile             run the server (and the --against one) under --cpu-prof, with a summary beside each
  --against <ref>       also the server of an earlier commit (a release, as 2.0.0, or any git ref), built
                        in a temporary folder, in the same rounds; prints this tree / that one
  -h, --help            this text

Results: the tables printed, and bench-results/<timestamp>.json. What each figure means: docs/performance.md.
`;

/** The options, or a clean exit: --help prints the usage (0); a bad option one line and the usage (2). */
function options() {
  try {
    return parseArgs({
      options: {
        duration: { type: 'string', default: '10' },
        connections: { type: 'string', default: '10' },
        rounds: { type: 'string', default: '1' },
        profile: { type: 'boolean', default: false },
        backend: { type: 'string', multiple: true, default: [] },
        scenario: { type: 'string', multiple: true, default: [] },
        against: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (error) {
    process.stderr.write(`pnpm bench: ${(error as Error).message}\n\n${usage}`);
    process.exit(2);
  }
}
const values = options();
if (values.help) {
  process.stdout.write(usage);
  process.exit(0);
}
/** --against: the commit it names, built before anything is started. */
const against = values.against;
let againstCommit: ReturnType<typeof commitOf> | undefined;
let earlier: ReturnType<typeof earlierServer> | undefined;
try {
  againstCommit = against === undefined ? undefined : commitOf(against);
  earlier = againstCommit && earlierServer(against as string, againstCommit);
} catch (error) {
  process.stderr.write(`pnpm bench: ${(error as Error).message}\n`);
  process.exit(2);
}
const only = values.scenario as string[];
const backends = values.backend as string[];
for (const b of backends) {
  if (!['postgres', 'postgres+redis'].includes(b))
    throw new Error(`--backend ${b}: postgres or postgres+redis`);
}
const duration = Number(values.duration);
const connections = Number(values.connections);
/** Rounds of every contestant in turn; each figure reported is the median of its rounds. */
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds ${values.rounds}: a whole number ≥ 1`);
const results = join(root, 'bench-results');
const floorMain = fileURLToPath(new URL('../dist/floor.js', import.meta.url));
const bareExpressMain = fileURLToPath(new URL('../dist/bare-express.js', import.meta.url));
const validatedExpressMain = fileURLToPath(new URL('../dist/validated-express.js', import.meta.url));
// What a user would pick instead, doing the same job (src/usual-express.ts, src/fastify-stack.ts).
const usualExpressMain = fileURLToPath(new URL('../dist/usual-express.js', import.meta.url));
const fastifyMain = fileURLToPath(new URL('../dist/fastify-stack.js', import.meta.url));
const postgresUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
// Redis: one of the bench's own (its command counts are this bench's alone), unless BENCH_REDIS_URL names one.
const redis = backends.includes('postgres+redis') ? await benchRedis(process.env.BENCH_REDIS_URL) : undefined;
const redisUrl = redis?.url ?? '';
const redisCost = (commands: number, requests: number, wallMs: number) => ({
  redisCommandsPerRequest: commands / requests,
  redisCommandsPerSecond: (commands * 1000) / wallMs,
});
/** PostgreSQL transactions on the bench's database so far (pg_stat_database, flushed within a second). */
async function postgresTransactions(): Promise<number> {
  await new Promise((r) => setTimeout(r, 1_100));
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1',
      [pgDatabase],
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

// The store: 1,000 pets and one enterprise key with limits far above what the load can reach.
const dir = mkdtempSync(join(tmpdir(), 'animal-store-bench-'));
const databasePath = join(dir, 'bench.db');
const statuses = ['available', 'pending', 'sold'] as const;
/** The pets every store is seeded with (ids 1 to 1,000 in a new store). */
const pets = Array.from({ length: 1000 }, (_, i) => ({
  name: `Pet ${i}`,
  categoryId: 1 + (i % 10),
  status: statuses[i % 3] as 'available',
}));
/** Seeds a store with the pets and one key (the same secret on every store, so one header serves all). */
async function seed(store: Store, keyFrom?: string): Promise<string> {
  for (const pet of pets) await store.pets.create(pet, () => {});
  const { key } = await store.keys.create({
    plan: 'enterprise',
    quota: { perMinute: 1e12, perDay: 1e12 },
    label: 'bench',
  });
  if (keyFrom) return keyFrom;
  return key;
}
/** A key of one request a minute: past its first, every request is refused (the refusal's cost, below). */
const limitedKey = async (store: Store) =>
  `Bearer ${(await store.keys.create({ plan: 'enterprise', quota: { perMinute: 1, perDay: 1e12 }, label: 'limited' })).key}`;
const sqlite = openSqliteStore(databasePath);
const key = await seed(sqlite.store);
/** Each target's limited key, for the refusal's cost (this tree's server, on SQLite and PostgreSQL + Redis). */
const limitedOf = new Map([['server', await limitedKey(sqlite.store)]]);
await sqlite.store.close();
const authorization = `Bearer ${key}`;

// PostgreSQL rows: a database of their own, seeded alike; their key differs, so each target has its header.
const pgDatabase = `animal_store_bench_${process.pid}`;
const pgUrl = Object.assign(new URL(postgresUrl), { pathname: `/${pgDatabase}` }).toString();
const headersOf = new Map<string, string>();
if (backends.length > 0) {
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${pgDatabase}`);
  await admin.end();
  const backend = await openBackend(
    { engine: 'postgres', url: pgUrl, poolSize: 4, statementTimeoutMs: 5_000 },
    undefined,
    pino({ level: 'silent' }),
  );
  headersOf.set('postgres', `Bearer ${await seed(backend.store)}`);
  limitedOf.set('postgres+redis', await limitedKey(backend.store));
  await backend.close();
}

type Target = { name: string; url: string; child: ChildProcess };
// Every contestant started, stopped when the bench exits however it ends: one that failed midway left them
// running, holding the output pipes of whoever started the bench (a test's spawnSync waited for good).
const contestants = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of contestants)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
});
async function start(
  name: string,
  args: string[],
  env: Record<string, string> = { DATABASE_URL: databasePath },
): Promise<Target & { coldStartMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    env: {
      ...process.env,
      PORT: '0',
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  contestants.add(child);
  let output = '';
  child.stdout?.on('data', (d) => {
    if (output.length < 4096) output += d; // keep draining the logs; remember only the start
  });
  while (!/"url":"http/.test(output)) {
    if (child.exitCode !== null) throw new Error(`${name} exited:\n${output}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  const url = /"url":"(http:[^"]+)"/.exec(output)?.[1] as string;
  while (
    (
      await fetch(`${url}/v1/pets`, {
        headers: { authorization: headersOf.get(name) ?? authorization },
      }).catch(() => undefined)
    )?.status !== 200
  ) {
    await new Promise((r) => setTimeout(r, 5));
  }
  return { name, url, child, coldStartMs: performance.now() - started };
}

/** CPU time (user + system) a process and its children (cluster workers) have used so far, from /proc. */
const cpuMs = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const own = (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean);
  return own + children.reduce((sum, child) => sum + cpuMs(Number(child)), 0);
};
const peakRssMb = (pid: number) =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN) / 1024;

const profiles = join(results, 'profiles');
mkdirSync(profiles, { recursive: true });
const profilesBefore = new Set(readdirSync(profiles));
const profile = values.profile ? ['--cpu-prof', '--cpu-prof-dir', profiles] : [];
/**
 * This tree's servers never ban the limited key while it is driven past its limit (10 s at thousands a
 * second stays far below the threshold's ceiling): the refusal measured is `rate_limited`, the one that
 * reads and counts, not a ban's (answered from memory since 1.x).
 */
const neverBans = { RATE_LIMIT_BAN_THRESHOLD: '1000000' };
const server = await start('server', [...serverFlags, ...profile, serverMain], {
  DATABASE_URL: databasePath,
  ...neverBans,
});
const bare = await start('bare-express', [bareExpressMain]);
const validated = await start('validated Express', [validatedExpressMain]);
const floor = await start('floor', [floorMain]);
const peers = [await start('usual Express', [usualExpressMain]), await start('Fastify', [fastifyMain])];
// A collector for the traced server: an OTLP/HTTP endpoint that takes every export and keeps nothing.
const collector = createHttpServer((req, res) => {
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
  await start('WORKERS=2', [...serverFlags, serverMain], { DATABASE_URL: databasePath, WORKERS: '2' }),
  await start('traced', [...serverFlags, serverMain], tracing),
  await start('traced 10 %', [...serverFlags, serverMain], {
    ...tracing,
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.1',
  }),
];
// --against: the earlier commit's server on a store of its own, seeded alike through its keys command and API.
if (against !== undefined && earlier) {
  const databaseUrl = join(dir, 'against.db');
  headersOf.set(against, `Bearer ${earlier.key(databaseUrl)}`);
  limitedOf.set(against, `Bearer ${earlier.key(databaseUrl, 1)}`);
  const target = await start(against, earlier.args(profile), { DATABASE_URL: databaseUrl, ...neverBans });
  await seedThroughApi(target.url, headersOf.get(against) as string, pets);
  extra.push(target);
}
// Measured right after this tree's server in every round, so that the machine's drift between the two (a
// shared VM's steal comes and goes over tens of seconds) is the least it can be; the ratio is the median of
// the rounds' own ratios.
/** The server with WORKERS=2 on PostgreSQL + Redis: each worker takes its own leases and pings Redis. */
const redisWorkers = 'postgres+redis WORKERS=2';
for (const b of backends) {
  headersOf.set(b, headersOf.get('postgres') as string);
  const env: Record<string, string> = {
    DATABASE_URL: pgUrl,
    ...(b === 'postgres+redis' && { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `bench:${process.pid}:` }),
    ...neverBans,
  };
  extra.push(await start(b, [...serverFlags, ...profile, serverMain], env)); // profiled too, with --profile
  if (b === 'postgres+redis') {
    headersOf.set(redisWorkers, headersOf.get(b) as string);
    extra.push(await start(redisWorkers, [...serverFlags, serverMain], { ...env, WORKERS: '2' }));
  }
}

const scenarios = (
  [
    { name: 'GET /v1/pets?limit=20', requests: [{ method: 'GET', path: '/v1/pets?limit=20' }] },
    {
      name: 'GET /v1/pets?limit=100&status=available',
      requests: [{ method: 'GET', path: '/v1/pets?limit=100&status=available' }],
    },
    {
      name: 'POST /v1/pets',
      requests: [
        { method: 'POST', path: '/v1/pets', body: JSON.stringify({ name: 'Bench', categoryId: 1 }) },
      ],
    },
    { name: 'GET /v1/pets/{id}', requests: [{ method: 'GET', path: '/v1/pets/500' }] },
    {
      name: '20/80 POST/list mix',
      requests: [
        { method: 'POST', path: '/v1/pets', body: JSON.stringify({ name: 'Mix', categoryId: 1 }) },
        ...Array.from({ length: 4 }, () => ({ method: 'GET' as const, path: '/v1/pets?limit=20' })),
      ],
    },
  ] as const
).filter((s) => only.length === 0 || only.some((o) => s.name.includes(o)));

type Measure = {
  reqPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** CPU time (user + system) the contestant spent per request: its cost, whatever the load generator got. */
  cpuUsPerRequest: number;
  /** Cores the contestant kept busy during the run, and the load generator (autocannon, in this process). */
  coresBusy: { target: number; generator: number; others: number; steal: number };
  /** What one request cost the shared stores: Redis commands, PostgreSQL transactions (on those engines). */
  redisCommandsPerRequest?: number;
  /** The same commands per second of the run: a busy key's cost is mostly a rate in time (leases). */
  redisCommandsPerSecond?: number;
  postgresTransactionsPerRequest?: number;
};
const rows: {
  scenario: string;
  measured: Record<string, Measure>;
  /** --against: this tree / that commit, the median of each round's ratio (req/s; CPU per request). */
  againstRatio?: { reqPerSec: number; cpuUsPerRequest: number; reqPerSecRange: [number, number] };
}[] = [];
/** Every target, in the order a round drives them: the --against server right after this tree's. */
const inOrder = () => {
  const paired = extra.filter((e) => e.name === against);
  return [server, ...paired, ...peers, bare, validated, floor, ...extra.filter((e) => e.name !== against)];
};
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};
/** Each figure of a contestant's rounds, the median of its rounds. */
const medianOf = (all: Measure[]): Measure => ({
  reqPerSec: median(all.map((x) => x.reqPerSec)),
  p50: median(all.map((x) => x.p50)),
  p99: median(all.map((x) => x.p99)),
  non2xx: all.reduce((sum, x) => sum + x.non2xx, 0),
  errors: all.reduce((sum, x) => sum + x.errors, 0),
  cpuUsPerRequest: median(all.map((x) => x.cpuUsPerRequest)),
  coresBusy: {
    target: median(all.map((x) => x.coresBusy.target)),
    generator: median(all.map((x) => x.coresBusy.generator)),
    others: median(all.map((x) => x.coresBusy.others)),
    steal: median(all.map((x) => x.coresBusy.steal)),
  },
  ...(all[0]?.redisCommandsPerRequest !== undefined && {
    redisCommandsPerRequest: median(all.map((x) => x.redisCommandsPerRequest as number)),
    redisCommandsPerSecond: median(all.map((x) => x.redisCommandsPerSecond as number)),
  }),
  ...(all[0]?.postgresTransactionsPerRequest !== undefined && {
    postgresTransactionsPerRequest: median(all.map((x) => x.postgresTransactionsPerRequest as number)),
  }),
});
/** The cores a run kept busy: the contestant's CPU time, and this process's (the load generator's). */
/** The whole machine's busy and stolen CPU time so far, in ms (/proc/stat's first line, ticks of 10 ms). */
function machineMs(): { busy: number; steal: number } {
  const [user, nice, system, , , irq, softirq, steal] = (
    readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? ''
  )
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const ticks = (...xs: (number | undefined)[]) => xs.reduce<number>((sum, x) => sum + (x ?? 0), 0) * 10;
  return { busy: ticks(user, nice, system, irq, softirq), steal: ticks(steal) };
}
/**
 * The cores a run kept busy: the contestant's CPU time, this process's (the load generator's), and the box's
 * load meanwhile: what every other process took, and what the hypervisor stole.
 */
function coresBusy(
  targetCpuMs: number,
  generatorBefore: NodeJS.CpuUsage,
  wallBefore: number,
  machineBefore: ReturnType<typeof machineMs>,
) {
  const wallMs = performance.now() - wallBefore;
  const usage = process.cpuUsage(generatorBefore);
  const generatorMs = (usage.user + usage.system) / 1000;
  const machine = machineMs();
  return {
    target: targetCpuMs / wallMs,
    generator: generatorMs / wallMs,
    others: Math.max(0, machine.busy - machineBefore.busy - targetCpuMs - generatorMs) / wallMs,
    steal: (machine.steal - machineBefore.steal) / wallMs,
  };
}
type Request = { method: 'GET' | 'POST'; path: string; body?: string };
/** The requests each process served in measured runs (by pid): a profile's busy time is divided by them. */
const served = new Map<number, number>();
/** One run of `requests` against `target` (as `authorizationHeader`): its throughput, latency and costs. */
async function measureOnce(
  target: Target,
  requests: readonly Request[],
  authorizationHeader: string,
): Promise<Measure> {
  const onRedis = target.name.startsWith('postgres+redis');
  const onPostgres = target.name.startsWith('postgres');
  if (onRedis) redis?.cli('CONFIG', 'RESETSTAT');
  const transactionsBefore = onPostgres ? await postgresTransactions() : 0;
  const cpuBefore = cpuMs(target.child.pid as number);
  const generatorBefore = process.cpuUsage();
  const wallBefore = performance.now();
  const machineBefore = machineMs();
  const result = await autocannon({
    url: target.url,
    headers: { authorization: authorizationHeader, 'content-type': 'application/json' },
    requests: requests.map((r) => ({ ...r })),
    connections,
    duration,
  });
  const pid = target.child.pid as number;
  served.set(pid, (served.get(pid) ?? 0) + result.requests.total);
  return {
    reqPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    cpuUsPerRequest: ((cpuMs(target.child.pid as number) - cpuBefore) * 1000) / result.requests.total,
    coresBusy: coresBusy(
      cpuMs(target.child.pid as number) - cpuBefore,
      generatorBefore,
      wallBefore,
      machineBefore,
    ),
    ...(onRedis && redisCost(redis?.commands() ?? 0, result.requests.total, performance.now() - wallBefore)),
    ...(onPostgres && {
      postgresTransactionsPerRequest:
        ((await postgresTransactions()) - transactionsBefore) / result.requests.total,
    }),
  };
}
let peakRssUnderListLoad = 0;
for (const scenario of scenarios) {
  const runs = new Map<string, Measure[]>();
  for (let round = 0; round < rounds; round++) {
    for (const target of inOrder()) {
      const ofTarget = runs.get(target.name) ?? [];
      runs.set(target.name, ofTarget);
      ofTarget.push(
        await measureOnce(target, scenario.requests, headersOf.get(target.name) ?? authorization),
      );
    }
  }
  const measured = Object.fromEntries([...runs].map(([name, all]) => [name, medianOf(all)]));
  if (scenario.name.startsWith('GET /v1/pets?')) {
    peakRssUnderListLoad = Math.max(peakRssUnderListLoad, peakRssMb(server.child.pid as number));
  }
  const ratiosOf = (figure: (x: Measure) => number) => {
    const [now, then] = [runs.get('server') ?? [], runs.get(against as string) ?? []];
    return now.map((x, i) => figure(x) / figure(then[i] as Measure));
  };
  // Only beside an --against server: without one there is nothing to divide by.
  const againstRatio = (): (typeof rows)[number]['againstRatio'] => {
    const throughput = ratiosOf((x) => x.reqPerSec);
    return {
      reqPerSec: median(throughput),
      reqPerSecRange: [Math.min(...throughput), Math.max(...throughput)],
      cpuUsPerRequest: median(ratiosOf((x) => x.cpuUsPerRequest)),
    };
  };
  rows.push({
    scenario: scenario.name,
    measured,
    ...(against !== undefined && { againstRatio: againstRatio() }),
  });
}

/**
 * What a refusal costs against what an answer costs: the same request (one pet) by a key far from its
 * limits (200) and by a key of one a minute (429 rate_limited, never a ban: neverBans), in alternating
 * rounds, on this tree's server on SQLite, the --against one (on SQLite), and, with --backend
 * postgres+redis, on PostgreSQL + Redis (where a refusal's store calls show as Redis commands). #58's goal:
 * a 429 costs no more CPU than a 200.
 */
const refusals: { target: string; answered: Measure; refused: Measure }[] = [];
if (only.length === 0 || only.some((o) => 'refusal'.includes(o))) {
  const onePet: Request[] = [{ method: 'GET', path: '/v1/pets/500' }];
  for (const target of [server, ...extra.filter((e) => limitedOf.has(e.name))]) {
    const answered: Measure[] = [];
    const refused: Measure[] = [];
    for (let round = 0; round < rounds; round++) {
      answered.push(await measureOnce(target, onePet, headersOf.get(target.name) ?? authorization));
      refused.push(await measureOnce(target, onePet, limitedOf.get(target.name) as string));
    }
    refusals.push({ target: target.name, answered: medianOf(answered), refused: medianOf(refused) });
  }
}

for (const target of inOrder()) {
  target.child.kill('SIGTERM');
  await new Promise((r) => target.child.once('exit', r));
}
collector.close();
redis?.stop();
rmSync(dir, { recursive: true, force: true });
const summaries = readdirSync(profiles)
  .filter((f) => f.endsWith('.cpuprofile') && !profilesBefore.has(f))
  // Node names a profile CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile.
  .map((f) => ({ pid: Number(f.split('.')[3]), ...summarise(join(profiles, f), root) }));
// --profile: this tree's server's layers in µs of CPU a request (its profile's busy time in each, over the
// requests it served in every measured run of this one), our own against their budget (issue #73).
const serverProfile = summaries.find((summary) => summary.pid === server.child.pid)?.layerUs;
const serverServed = served.get(server.child.pid as number) ?? 0;
const layers =
  serverProfile && serverServed > 0
    ? [...serverProfile]
        .map(([layer, us]) => ({
          layer,
          usPerRequest: us / serverServed,
          ...(ourLayers.includes(layer) && { budgetUs: layerBudgetUs }),
        }))
        .sort((a, b) => b.usPerRequest - a.usPerRequest)
    : undefined;
if (backends.length > 0) {
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${pgDatabase} WITH (FORCE)`);
  await admin.end();
}

/**
 * What usage metering costs a request: the meter's own work, timed here in the same process (a Map
 * increment per request, and one store write per key and day every usageFlushMs), set against the full
 * server's CPU per list request measured above. Too small to show as a difference of two load runs.
 */
async function meteringCost() {
  const memory = openSqliteStore(':memory:');
  const meter = new UsageMeter(memory.store.usage, pino({ level: 'silent' }), {
    retentionDays: 400,
    flushMs: 3_600_000,
  });
  const keys = Array.from({ length: 1_000 }, (_, i) => `key${String(i).padStart(9, '0')}`);
  const record = (n: number) => {
    for (let i = 0; i < n; i++) meter.record(keys[i % keys.length] as string, 'admitted');
  };
  record(100_000); // warm-up
  const calls = 2_000_000;
  const started = performance.now();
  record(calls);
  const recordNs = ((performance.now() - started) * 1e6) / calls;
  const flushStarted = performance.now();
  await meter.flush(); // 1,000 keys' days in one write
  const flushMs = performance.now() - flushStarted;
  await meter.close();
  await memory.store.close();
  return { recordNs, flushMs };
}
const metering = await meteringCost();
const listCpuUs = rows.find((r) => r.scenario.startsWith('GET /v1/pets?'))?.measured.server?.cpuUsPerRequest;

const fixed = (n: number, digits = 0) => n.toFixed(digits);
/**
 * A table after a blank line: its header, a separator as wide, its rows; nothing when it has no row (its
 * scenarios left out by --scenario, or what it compares not run).
 */
const table = (header: string, body: string[]): string[] =>
  body.length === 0 ? [] : ['', header, `|${'---|'.repeat(header.split(' | ').length)}`, ...body];
const m = (row: (typeof rows)[number], name: string) => row.measured[name] as Measure;
const goals = judge({
  rows,
  refusals,
  ...(against !== undefined && earlier && { against: { ref: against } }),
  coldStartMs: { server: server.coldStartMs },
  peakRssUnderListLoadMb: peakRssUnderListLoad,
  ...(layers && { layers }),
});
const lines = [
  `Animal Store bench: ${connections} connections, ${duration} s per run, median of ${rounds} round(s); ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fixed(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
  ...table(
    '| scenario | full req/s | bare Express req/s | floor req/s | full / bare | validated Express req/s | validated / bare | bare / floor | full p50/p99 ms | bare p50/p99 ms | floor p50/p99 ms | full p99 / bare p99 | CPU µs/req full/validated/bare/floor | non-2xx |',
    rows.map((row) => {
      const [s, v, b, f] = ['server', 'validated Express', 'bare-express', 'floor'].map((n) => m(row, n)) as [
        Measure,
        Measure,
        Measure,
        Measure,
      ];
      return `| ${row.scenario} | ${fixed(s.reqPerSec)} | ${fixed(b.reqPerSec)} | ${fixed(f.reqPerSec)} | ${fixed(s.reqPerSec / b.reqPerSec, 2)} | ${fixed(v.reqPerSec)} | ${fixed(v.reqPerSec / b.reqPerSec, 2)} | ${fixed(b.reqPerSec / f.reqPerSec, 2)} | ${s.p50}/${s.p99} | ${b.p50}/${b.p99} | ${f.p50}/${f.p99} | ${fixed(s.p99 / Math.max(b.p99, 1), 2)} | ${[s, v, b, f].map((x) => fixed(x.cpuUsPerRequest)).join('/')} | ${s.non2xx + v.non2xx + b.non2xx + f.non2xx} |`;
    }),
  ),
  ...table(
    '| scenario | ' +
      ['full', ...extra.map((e) => e.name)]
        .map((n) => `${n} req/s | ${n} / usual Express | ${n} / Fastify`)
        .join(' | ') +
      ' | usual Express req/s | Fastify req/s | CPU µs/req full/usual/Fastify | p99 ms full/usual/Fastify |',
    rows.map((row) => {
      const [usual, fast] = [m(row, 'usual Express'), m(row, 'Fastify')];
      const ours = ['server', ...extra.map((e) => e.name)].map((name) => {
        const r = m(row, name).reqPerSec;
        return `${fixed(r)} | ${fixed(r / usual.reqPerSec, 2)} | ${fixed(r / fast.reqPerSec, 2)}`;
      });
      const s = m(row, 'server');
      return `| ${row.scenario} | ${ours.join(' | ')} | ${fixed(usual.reqPerSec)} | ${fixed(fast.reqPerSec)} | ${[s, usual, fast].map((x) => fixed(x.cpuUsPerRequest)).join('/')} | ${[s, usual, fast].map((x) => x.p99).join('/')} |`;
    }),
  ),
  ...table(
    `| scenario | SQLite, WORKERS=1 req/s | ${extra.map((e) => `${e.name} req/s | ${e.name} / WORKERS=1`).join(' | ')} |`,
    extra.length === 0
      ? []
      : rows.map((row) => {
          const base = m(row, 'server').reqPerSec;
          return `| ${row.scenario} | ${fixed(base)} | ${extra.map((e) => `${fixed(m(row, e.name).reqPerSec)} | ${fixed(m(row, e.name).reqPerSec / base, 2)}`).join(' | ')} |`;
        }),
  ),
  ...table(
    '| scenario | CPU µs/req tracing off | traced (every trace) | traced 10 % | cost µs/req every / 10 % |',
    rows.map((row) => {
      const [off, on, tenth] = ['server', 'traced', 'traced 10 %'].map((n) => m(row, n).cpuUsPerRequest);
      return `| ${row.scenario} | ${fixed(off as number)} | ${fixed(on as number)} | ${fixed(tenth as number)} | ${fixed((on as number) - (off as number))} / ${fixed((tenth as number) - (off as number))} |`;
    }),
  ),
  ...table(
    `| scenario | this tree req/s | ${against} req/s | this tree / ${against} | lowest–highest round | CPU µs/req this tree / ${against} | CPU ${against} / this tree |`,
    against === undefined
      ? []
      : rows.map((row) => {
          const [now, then] = [m(row, 'server'), m(row, against)];
          const ratio = row.againstRatio as NonNullable<typeof row.againstRatio>;
          return `| ${row.scenario} | ${fixed(now.reqPerSec)} | ${fixed(then.reqPerSec)} | ${fixed(ratio.reqPerSec, 2)} | ${ratio.reqPerSecRange.map((r) => fixed(r, 2)).join('–')} | ${fixed(now.cpuUsPerRequest)} / ${fixed(then.cpuUsPerRequest)} | ${fixed(1 / ratio.cpuUsPerRequest, 2)} |`;
        }),
  ),
  ...table(
    `| scenario | ${backends.map((b) => `${b} PostgreSQL transactions / request`).join(' | ')}${backends.includes('postgres+redis') ? ` | postgres+redis Redis commands / request, and / s (scripts' own commands counted) | ${redisWorkers}, the same |` : ' |'}`,
    backends.length === 0
      ? []
      : rows.map((row) => {
          const per = backends.map((b) => fixed(m(row, b).postgresTransactionsPerRequest ?? Number.NaN, 3));
          const cost = (name: string) =>
            ` ${fixed(m(row, name).redisCommandsPerRequest ?? Number.NaN, 4)}, ${fixed(m(row, name).redisCommandsPerSecond ?? Number.NaN, 1)} |`;
          const onRedis = backends.includes('postgres+redis')
            ? cost('postgres+redis') + cost(redisWorkers)
            : '';
          return `| ${row.scenario} | ${per.join(' | ')} |${onRedis}`;
        }),
  ),
  '',
  ...(rows.length && extra.some((e) => e.name === 'WORKERS=2')
    ? [
        `cores kept busy (of ${cpus().length}) by WORKERS=2 and by the load generator: ${rows
          .map((row) => {
            const busy = m(row, 'WORKERS=2').coresBusy;
            return `${row.scenario} ${fixed(busy.target, 2)} + ${fixed(busy.generator, 2)}`;
          })
          .join('; ')}`,
      ]
    : []),
  ...table(
    '| the cost of a refusal (GET /v1/pets/{id}) | 200 CPU µs/req | 429 CPU µs/req | 429 / 200 | 200 req/s | 429 req/s | Redis commands per 200 / per 429 |',
    refusals.map(({ target, answered: a, refused: r }) => {
      const redisPer =
        a.redisCommandsPerRequest === undefined
          ? '–'
          : `${fixed(a.redisCommandsPerRequest, 4)} / ${fixed(r.redisCommandsPerRequest ?? Number.NaN, 4)}`;
      return `| ${target} | ${fixed(a.cpuUsPerRequest)} | ${fixed(r.cpuUsPerRequest)} | ${fixed(r.cpuUsPerRequest / a.cpuUsPerRequest, 2)} | ${fixed(a.reqPerSec)} | ${fixed(r.reqPerSec)} | ${redisPer} |`;
    }),
  ),
  '',
  `cold start to first 200: server ${fixed(server.coldStartMs)} ms, bare Express ${fixed(bare.coldStartMs)} ms, floor ${fixed(floor.coldStartMs)} ms`,
  ...(peakRssUnderListLoad
    ? [`peak RSS of the server under the list load: ${fixed(peakRssUnderListLoad, 1)} MB`]
    : []),
  `usage metering: ${fixed(metering.recordNs)} ns per request${listCpuUs ? ` (${fixed(metering.recordNs / 10 / listCpuUs, 3)} % of the full server's ${fixed(listCpuUs)} µs of CPU per list request)` : ''}, plus one write of every key's day every ${usageFlushMs / 1000} s (${fixed(metering.flushMs, 1)} ms for 1,000 keys)`,
  ...table(
    `| layer of this tree's server (--profile: its main thread's busy time over the ${serverServed} requests of every measured run) | CPU µs/req | budget |`,
    (layers ?? []).map(
      (l) =>
        `| ${l.layer} | ${fixed(l.usPerRequest, 1)} | ${l.budgetUs === undefined ? '–' : `≤ ${l.budgetUs}`} |`,
    ),
  ),
  '',
  'The goals (docs/performance.md), as this run measured them:',
  ...goalTable(goals),
];
const printed = lines.join('\n').replace(/\n{3,}/g, '\n\n');
process.stdout.write(`${printed}\n`);
const report = {
  date: new Date().toISOString(),
  machine: {
    cpus: cpus().length,
    model: cpus()[0]?.model,
    memoryGiB: totalmem() / 2 ** 30,
    node: process.version,
  },
  options: { connections, duration, rounds },
  ...(earlier && { against: { ref: against, commit: againstCommit?.commit } }),
  rows,
  refusals,
  goals,
  coldStartMs: { server: server.coldStartMs, bareExpress: bare.coldStartMs, floor: floor.coldStartMs },
  peakRssUnderListLoadMb: peakRssUnderListLoad,
  metering,
  ...(layers && { layers }),
};
const file = join(results, `${report.date.replace(/[:.]/g, '-')}.json`);
writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
process.stdout.write(`written: ${file}\n`);
for (const summary of summaries) process.stdout.write(`profile summary: ${summary.file}\n`);
