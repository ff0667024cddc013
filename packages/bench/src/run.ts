// `pnpm bench` (options: options.ts, or `pnpm bench --help`): the real server (built from this tree, with
// validation, rate limiting and logging on; also with OpenTelemetry on, every trace and a tenth of them,
// exporting to a collector here that keeps nothing) against what a user would pick instead for the same job
// (the usual Express stack, src/usual-express.ts; a Fastify stack, src/fastify-stack.ts), bare Express doing
// the floor's work (src/bare-express.ts), the same with the server's contract validation both ways and
// nothing else (src/validated-express.ts) and the framework-free floor (src/floor.ts), all on loopback over
// one SQLite file seeded with 1,000 pets and an enterprise key whose limits never interfere; autocannon
// drives them in alternation with the same connections and duration (measure.ts). With --backend, the same
// server on PostgreSQL (and Redis) is measured too, on the same data, with what a request costs the shared
// stores (PostgreSQL transactions; Redis commands, on a redis-server of the bench's own). Prints the tables
// (report.ts) and writes bench-results/<timestamp>.json. --profile runs the server under --cpu-prof
// (bench-results/profiles/) and writes a text summary beside each profile (src/profile-summary.ts).
// --scenario <text> keeps the scenarios whose name contains it ('refusal': a 429's cost against a 200's).
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore, usageFlushMs } from '@animal-store/server';
import { dropPostgres, pgUrl, postgresTransactions, seededPostgres } from './bench-postgres.js';
import { limitedKey, seed, stopAll } from './contestants.js';
import { judge, loadOf } from './goals.js';
import { lineUp, redisWorkers } from './lineup.js';
import { againstRatio, type Measure, measurer, medianOf, peakRssMb, type Request } from './measure.js';
import { meteringCost } from './metering.js';
import { benchOptions } from './options.js';
import { benchRedis } from './private-redis.js';
import { layersPerRequest, summarise } from './profile-summary.js';
import { releaseNote } from './release-note.js';
import { againstTable, type Refusal, type Row, report } from './report.js';
import { scenarios } from './scenarios.js';
import { root } from './server-command.js';

const {
  against,
  againstCommit,
  earlier,
  releaseNote: releaseNoteFile,
  backends,
  only,
  duration,
  connections,
  rounds,
  ...options
} = benchOptions();
const results = join(root, 'bench-results');
// Redis: one of the bench's own (its command counts are this bench's alone), unless BENCH_REDIS_URL names one.
const redis = backends.includes('postgres+redis') ? await benchRedis(process.env.BENCH_REDIS_URL) : undefined;
const { measureOnce, served } = measurer({ connections, duration, redis, postgresTransactions });

// The store: 1,000 pets and one enterprise key with limits far above what the load can reach.
const dir = mkdtempSync(join(tmpdir(), 'animal-store-bench-'));
const databasePath = join(dir, 'bench.db');
const sqlite = openSqliteStore(databasePath);
const authorization = `Bearer ${await seed(sqlite.store)}`;
/** Each target's limited key, for the refusal's cost (this tree's server, on SQLite and PostgreSQL + Redis). */
const limitedOf = new Map([['server', await limitedKey(sqlite.store)]]);
await sqlite.store.close();
const headersOf = new Map<string, string>();
if (backends.length > 0) {
  // PostgreSQL rows: a database of their own, seeded alike; their key differs, so each target has its header.
  const { key, limited } = await seededPostgres();
  headersOf.set('postgres', key);
  limitedOf.set('postgres+redis', limited);
}
const profiles = join(results, 'profiles');
mkdirSync(profiles, { recursive: true });
const profilesBefore = new Set(readdirSync(profiles));
const profile = options.profile ? ['--cpu-prof', '--cpu-prof-dir', profiles] : [];
const stores = { databasePath, dir, pgUrl, redisUrl: redis?.url ?? '', headersOf, limitedOf, authorization };
const { server, bare, floor, extra, collector, inOrder, headerOf } = await lineUp(stores, {
  profile,
  against,
  earlier,
  backends,
});
const rows: Row[] = [];
let peakRssUnderListLoad = 0;
for (const scenario of scenarios(only)) {
  const runs = new Map<string, Measure[]>(inOrder.map((target) => [target.name, []]));
  for (let round = 0; round < rounds; round++)
    for (const target of inOrder)
      runs.get(target.name)?.push(await measureOnce(target, scenario.requests, headerOf(target.name)));
  if (scenario.name.startsWith('GET /v1/pets?'))
    peakRssUnderListLoad = Math.max(peakRssUnderListLoad, peakRssMb(server.child.pid as number));
  const compared =
    against === undefined ? undefined : againstRatio(runs.get('server') ?? [], runs.get(against) ?? []);
  rows.push({
    scenario: scenario.name,
    measured: Object.fromEntries([...runs].map(([name, all]) => [name, medianOf(all)])),
    ...(compared && { againstRatio: compared }),
  });
}

/**
 * What a refusal costs against what an answer costs: the same request (one pet) by a key far from its
 * limits (200) and by a key of one a minute (429 rate_limited, never a ban: neverBans), in alternating
 * rounds, on this tree's server on SQLite, the --against one (on SQLite), and, with --backend
 * postgres+redis, on PostgreSQL + Redis (where a refusal's store calls show as Redis commands). #58's goal:
 * a 429 costs no more CPU than a 200.
 */
const refusals: Refusal[] = [];
if (only.length === 0 || only.some((o) => 'refusal'.includes(o))) {
  const onePet: Request[] = [{ method: 'GET', path: '/v1/pets/500' }];
  for (const target of [server, ...extra.filter((e) => limitedOf.has(e.name))]) {
    const answered: Measure[] = [];
    const refused: Measure[] = [];
    for (let round = 0; round < rounds; round++) {
      answered.push(await measureOnce(target, onePet, headerOf(target.name)));
      refused.push(await measureOnce(target, onePet, limitedOf.get(target.name) as string));
    }
    refusals.push({ target: target.name, answered: medianOf(answered), refused: medianOf(refused) });
  }
}

await stopAll(inOrder);
collector.close();
redis?.stop();
rmSync(dir, { recursive: true, force: true });
if (backends.length > 0) await dropPostgres();
const summaries = readdirSync(profiles)
  .filter((f) => f.endsWith('.cpuprofile') && !profilesBefore.has(f))
  // Node names a profile CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile.
  .map((f) => ({ pid: Number(f.split('.')[3]), ...summarise(join(profiles, f), root) }));
// --profile: this tree's server's layers in µs of CPU a request (its profile's busy time in each, over the
// requests it served in every measured run of this one), our own against their budget (issue #73).
const serverProfile = summaries.find((summary) => summary.pid === server.child.pid)?.layerUs;
const serverServed = served.get(server.child.pid as number) ?? 0;
const layers = serverProfile && layersPerRequest(serverProfile, serverServed);

const coldStartMs = { server: server.coldStartMs, bareExpress: bare.coldStartMs, floor: floor.coldStartMs };
const metering = await meteringCost();
const goals = judge({
  rows,
  refusals,
  ...(against !== undefined && earlier && { against: { ref: against } }),
  coldStartMs,
  peakRssUnderListLoadMb: peakRssUnderListLoad,
  ...(layers && { layers }),
});
process.stdout.write(
  `${report({
    options: { connections, duration, rounds },
    rows,
    refusals,
    extra: extra.map((e) => e.name),
    against,
    backends,
    redisWorkers,
    coldStartMs,
    peakRssUnderListLoadMb: peakRssUnderListLoad,
    metering,
    usageFlushMs,
    layers,
    serverServed,
    goals,
  })}\n`,
);
const date = new Date().toISOString();
const file = join(results, `${date.replace(/[:.]/g, '-')}.json`);
const machine = {
  cpus: cpus().length,
  model: cpus()[0]?.model,
  memoryGiB: totalmem() / 2 ** 30,
  node: process.version,
};
const json = {
  date,
  machine,
  options: { connections, duration, rounds },
  ...(earlier && { against: { ref: against, commit: againstCommit?.commit } }),
  rows,
  refusals,
  goals,
  coldStartMs,
  peakRssUnderListLoadMb: peakRssUnderListLoad,
  metering,
  ...(layers && { layers }),
};
writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
process.stdout.write(`written: ${file}\n`);
if (releaseNoteFile !== undefined && against !== undefined) {
  const load = loadOf(rows.flatMap((row) => [row.measured.server, row.measured[against]].filter((x) => !!x)));
  const measuredAs = `\`pnpm bench --against ${against} --rounds ${rounds} --duration ${duration} --connections ${connections}\`, Node ${process.version}, ${cpus().length} cores, the box's load ${load}`;
  writeFileSync(
    releaseNoteFile,
    releaseNote({ against, rows, table: againstTable({ rows, against }).slice(1), measuredAs }),
  );
  process.stdout.write(`release note: ${releaseNoteFile}\n`);
}
for (const summary of summaries) process.stdout.write(`profile summary: ${summary.file}\n`);
