// `pnpm bench:store-cost` (options: `usage` below): what the rate limits cost the shared store, Redis, per
// request, for the shapes of traffic an API meets, on 1 and 4 instances of the real server (built from this
// tree, on PostgreSQL + a redis-server of the bench's own), beside two per-request counters doing the same
// job (docs/decisions.md#what-the-limits-cost-the-store): rate-limiter-flexible's RateLimiterRedis (a
// minute and a day limiter, one consume of each per request), and an Envoy-style counter (INCRBY and EXPIRE
// a window, a request's four commands in one pipeline). Each run starts its instances on a key prefix of
// its own (every window new), drives the shape for --warmup seconds (leases ramp up), then counts for
// --duration seconds: every command Redis ran (INFO commandstats, a script's own commands counted, as the
// issue's goal counts them), split into the instances' upkeep (their probe, live count and ban list,
// whatever the traffic) and the limits' own; and round trips (MONITOR: commands a client sent, a MULTI …
// EXEC once; a pipeline once, counted by its sender). Prints the table and writes
// bench-results/store-cost-<timestamp>.json.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openBackend, type Plan, planQuotas } from '@animal-store/server';
import { Redis } from 'ioredis';
import pg from 'pg';
import { pino } from 'pino';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { commandLine } from './command-line.js';
import { benchRedis } from './private-redis.js';
import { root, serverEntry, serverFlags } from './server-command.js';

const usage = `Usage: pnpm bench:store-cost [options]

  --duration <s>        seconds each run is counted, after its warm-up (default 30)
  --warmup <s>          seconds each run is driven before counting (default 10)
  --instances <n>       server instances sharing the store (repeatable; default 1 and 4)
  --shape <text>        keep the shapes whose name contains it (repeatable, any of them): busy, 200 keys, 10,000 keys
  -h, --help            this text

Results: the table printed, and bench-results/store-cost-<timestamp>.json. What each figure means:
docs/performance.md#what-the-limits-cost-redis.
`;

const values = commandLine('pnpm bench:store-cost', usage, {
  duration: { type: 'string', default: '30' },
  warmup: { type: 'string', default: '10' },
  instances: { type: 'string', multiple: true, default: ['1', '4'] },
  shape: { type: 'string', multiple: true, default: [] },
  help: { type: 'boolean', short: 'h', default: false },
});
const seconds = (name: 'duration' | 'warmup') => {
  const n = Number(values[name]);
  if (!Number.isFinite(n) || n < 0) {
    process.stderr.write(`pnpm bench:store-cost: --${name} ${values[name]}: a number of seconds\n`);
    process.exit(2);
  }
  return n * 1000;
};
const durationMs = seconds('duration');
const warmupMs = seconds('warmup');
const instanceCounts = (values.instances as string[]).map(Number);
if (!instanceCounts.every((n) => Number.isInteger(n) && n >= 1)) {
  process.stderr.write(`pnpm bench:store-cost: --instances ${values.instances}: whole numbers ≥ 1\n`);
  process.exit(2);
}

/**
 * A shape of traffic: `keys` keys of `plan`, each sending `perSecond` requests a second, evenly spaced
 * (open loop: sent on time whatever the answers); or, without a rate, as fast as 10 connections go.
 */
type Shape = { name: string; keys: number; plan: Plan; perSecond?: number };
const shapes = (
  [
    { name: 'one busy key, 10 connections', keys: 1, plan: 'enterprise' },
    { name: '200 keys at 5/s', keys: 200, plan: 'business', perSecond: 5 },
    { name: '10,000 keys at 0.1/s', keys: 10_000, plan: 'free', perSecond: 0.1 },
  ] satisfies Shape[]
).filter((s) => {
  const asked = values.shape as string[];
  return asked.length === 0 || asked.some((text) => s.name.includes(text));
});
if (shapes.length === 0) {
  process.stderr.write(`pnpm bench:store-cost: --shape ${values.shape}: no shape's name contains it\n`);
  process.exit(2);
}
/** A key's quota: its plan's, and for the busy key (enterprise) limits its traffic never reaches. */
const quotaOf = (plan: Plan) =>
  plan === 'enterprise' ? { perMinute: 1e12, perDay: 1e12 } : planQuotas[plan];

const postgresUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const database = `animal_store_cost_${process.pid}`;
const databaseUrl = Object.assign(new URL(postgresUrl), { pathname: `/${database}` }).toString();
const redis = await benchRedis(process.env.BENCH_REDIS_URL);

async function onPostgres(sql: string) {
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(sql);
  await admin.end();
}

// The keys of every shape, in one database the instances share.
await onPostgres(`CREATE DATABASE ${database}`);
const secrets = new Map<string, { id: string; authorization: string }[]>();
{
  const { store, close } = await openBackend(
    { engine: 'postgres', url: databaseUrl, poolSize: 8, statementTimeoutMs: 30_000 },
    undefined,
    pino({ level: 'silent' }),
  );
  for (const shape of shapes) {
    const made: { id: string; authorization: string }[] = [];
    for (let i = 0; i < shape.keys; i += 100) {
      const batch = Array.from({ length: Math.min(100, shape.keys - i) }, () =>
        store.keys.create({ plan: shape.plan, quota: quotaOf(shape.plan), label: shape.name }),
      );
      for (const { id, key } of await Promise.all(batch)) made.push({ id, authorization: `Bearer ${key}` });
    }
    secrets.set(shape.name, made);
  }
  await close();
}

/** The server's instances, on the shared PostgreSQL and Redis, the windows under `prefix`. */
async function startInstances(count: number, prefix: string) {
  const started: { url: string; child: ChildProcess }[] = [];
  for (let i = 0; i < count; i++) {
    const child = spawn(process.execPath, [...serverFlags, serverEntry], {
      env: {
        ...process.env,
        PORT: '0',
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        DATABASE_URL: databaseUrl,
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: prefix,
        // The bench's one address stands in for thousands of clients: while an instance falls behind, the
        // open loop holds more connections than one client may (256), and the excess was reset.
        MAX_CONNECTIONS_PER_ADDRESS: '100000',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout?.on('data', (d) => {
      if (output.length < 8192) output += d;
    });
    const port = await new Promise<string>((resolve, reject) => {
      const look = setInterval(() => {
        const url = /"url":"http:\/\/[^"]*:(\d+)"/.exec(output)?.[1];
        if (url) resolve(url);
        else if (child.exitCode !== null) reject(new Error(`an instance exited:\n${output}`));
        else return;
        clearInterval(look);
      }, 10);
    });
    started.push({ url: `http://127.0.0.1:${port}`, child });
  }
  return started;
}

/** Answers by status; requests that got none by the error's cause (under `failed`, status 0). */
type Driven = { requests: number; byStatus: Record<string, number>; failed: Record<string, number> };

/**
 * Drives `shape` for `ms`: `send(key)` per request, returning its status. Open loop for a rate (request
 * n at n / (keys × perSecond) s, to key n mod keys), closed loop with 10 connections without one.
 */
async function drive(shape: Shape, send: (key: number) => Promise<number>, ms: number): Promise<Driven> {
  const driven: Driven = { requests: 0, byStatus: {}, failed: {} };
  const count = (status: number) => {
    driven.requests++;
    driven.byStatus[status] = (driven.byStatus[status] ?? 0) + 1;
  };
  const failed = (error: Error & { cause?: { code?: string; message?: string } }) => {
    const why = error.cause?.code ?? error.cause?.message ?? error.message;
    driven.failed[why] = (driven.failed[why] ?? 0) + 1;
    count(0);
  };
  const start = performance.now();
  const end = start + ms;
  if (!shape.perSecond) {
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (performance.now() < end) await send(0).then(count, failed);
      }),
    );
    return driven;
  }
  const everyMs = 1000 / (shape.keys * shape.perSecond);
  const inFlight = new Set<Promise<void>>();
  for (let n = 0; ; ) {
    const now = performance.now();
    if (now >= end) break;
    for (; start + n * everyMs <= now; n++) {
      const sent = send(n % shape.keys).then(count, failed);
      inFlight.add(sent);
      void sent.finally(() => inFlight.delete(sent));
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.all(inFlight);
  return driven;
}

/** The instances' own commands, sent whatever the traffic: the probe (marker), the live count, the ban list. */
const upkeep = new Set([
  'zrange',
  'ping',
  'exists',
  'multi',
  'exec',
  'zadd',
  'zremrangebyscore',
  'zcard',
  'pexpire',
  'zrem',
]);
/** Commands Redis ran since its statistics were reset, by name, the bench's own left out. */
function commandsByName(): Map<string, number> {
  const stats = redis.cli('INFO', 'commandstats') ?? '';
  const byName = new Map<string, number>();
  for (const [, name, calls] of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (!['info', 'config|resetstat', 'monitor', 'echo'].includes(name as string))
      byName.set(name as string, Number(calls));
  }
  return byName;
}

/**
 * Counts round trips while it runs: commands clients sent (not a script's own), a MULTI … EXEC once. Read
 * from `redis-cli MONITOR`'s lines (parsed here: no library reads them), not ioredis's monitor(): a line
 * that arrives with MONITOR's own answer, before ioredis has switched to monitoring, is taken for an
 * answer to a command and ends the process ("Command queue state error", redis/ioredis#1981), which a busy
 * machine made happen. `stop` sends a marker and counts up to it, so that every command sent before is read.
 */
async function roundTrips() {
  const monitor = spawn('redis-cli', ['-u', redis.url, 'MONITOR'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const lines = createInterface({ input: monitor.stdout as NonNullable<typeof monitor.stdout> });
  const marker = `round-trips-end-${process.pid}`;
  let trips = 0;
  const inMulti = new Set<string>();
  let listening: () => void = () => {};
  let ended: () => void = () => {};
  const listeningNow = new Promise<void>((resolve) => {
    listening = resolve;
  });
  const endedNow = new Promise<void>((resolve) => {
    ended = resolve;
  });
  lines.on('line', (line) => {
    if (line === 'OK') {
      listening();
      return;
    }
    // 1795863096.460176 [0 127.0.0.1:43774] "exists" "…", or [0 lua] for a script's own command
    const [, source, name, first] = /^\S+ \[\d+ ([^\]]+)\] "([^"]*)"(?: "([^"]*)")?/.exec(line) ?? [];
    if (!source || source === 'lua') return;
    const command = name?.toLowerCase();
    if (command === 'echo' && first === marker) {
      ended();
      return;
    }
    if (command === 'multi') inMulti.add(source);
    else if (command === 'exec') inMulti.delete(source);
    if (!inMulti.has(source) || command === 'multi') trips++;
  });
  monitor.once('exit', () => {
    listening();
    ended();
  });
  await listeningNow;
  return {
    async stop() {
      redis.cli('ECHO', marker);
      await Promise.race([endedNow, new Promise((r) => setTimeout(r, 5_000))]);
      monitor.kill();
      return trips;
    },
  };
}

type Cost = {
  requests: number;
  byStatus: Record<string, number>;
  commandsPerRequest: number;
  upkeepPerRequest: number;
  limitsPerRequest: number;
  roundTripsPerRequest: number;
  commandsPerSecond: number;
  byCommand: Record<string, number>;
};

/**
 * Counts what `traffic` costs Redis over its run (after its warm-up). `pipelines`: for a contestant that
 * pipelines its commands, how many pipelines it has sent so far, each one round trip (MONITOR shows a
 * pipeline's commands one by one, as if each were a trip of its own).
 */
async function counted(
  what: string,
  traffic: (ms: number) => Promise<Driven>,
  pipelines?: () => number,
): Promise<Cost> {
  process.stderr.write(`${what}…\n`);
  if (warmupMs > 0) await traffic(warmupMs);
  redis.cli('CONFIG', 'RESETSTAT');
  const trips = pipelines ? undefined : await roundTrips();
  const pipelinesBefore = pipelines?.() ?? 0;
  const started = performance.now();
  const driven = await traffic(durationMs);
  const wallMs = performance.now() - started;
  const roundTripCount = trips ? await trips.stop() : (pipelines?.() ?? 0) - pipelinesBefore;
  const byName = commandsByName();
  const all = [...byName.values()].reduce((a, b) => a + b, 0);
  const ofUpkeep = [...byName].filter(([name]) => upkeep.has(name)).reduce((a, [, n]) => a + n, 0);
  const per = (n: number) => n / driven.requests;
  return {
    ...driven,
    commandsPerRequest: per(all),
    upkeepPerRequest: per(ofUpkeep),
    limitsPerRequest: per(all - ofUpkeep),
    roundTripsPerRequest: per(roundTripCount),
    commandsPerSecond: (all * 1000) / wallMs,
    byCommand: Object.fromEntries(byName),
  };
}

const runs: ({ shape: string; contestant: string } & Cost)[] = [];
let run = 0;
for (const shape of shapes) {
  const keys = secrets.get(shape.name) ?? [];
  const quota = quotaOf(shape.plan);
  // The floor: a per-request counter of each window, as a user would add it (one consume each).
  {
    const client = new Redis(redis.url);
    const prefix = `floor:${process.pid}:${run++}`;
    const minute = new RateLimiterRedis({
      storeClient: client,
      keyPrefix: `${prefix}:m`,
      points: quota.perMinute,
      duration: 60,
    });
    const day = new RateLimiterRedis({
      storeClient: client,
      keyPrefix: `${prefix}:d`,
      points: quota.perDay,
      duration: 86_400,
    });
    const consume = async (key: number) => {
      const id = keys[key]?.id as string;
      try {
        await Promise.all([minute.consume(id), day.consume(id)]);
        return 200;
      } catch {
        return 429;
      }
    };
    runs.push({
      shape: shape.name,
      contestant: 'per-request counter (rate-limiter-flexible)',
      ...(await counted(`${shape.name}: the per-request counter`, (ms) => drive(shape, consume, ms))),
    });
    client.disconnect();
  }
  // What Envoy's rate limit service sends Redis: per window, INCRBY of the window's key (the window's
  // number in its name, so that each starts at 0) and EXPIRE, all of a request's in one pipeline.
  {
    const client = new Redis(redis.url);
    const prefix = `envoy:${process.pid}:${run++}`;
    let pipelines = 0;
    const consume = async (key: number) => {
      const id = keys[key]?.id as string;
      const now = Date.now();
      const minute = `${prefix}:m:${id}:${Math.floor(now / 60_000)}`;
      const day = `${prefix}:d:${id}:${Math.floor(now / 86_400_000)}`;
      pipelines++;
      const [[, inMinute], , [, inDay]] = (await client
        .pipeline()
        .incrby(minute, 1)
        .expire(minute, 60)
        .incrby(day, 1)
        .expire(day, 86_400)
        .exec()) as [[null, number], unknown, [null, number], unknown];
      return inMinute <= quota.perMinute && inDay <= quota.perDay ? 200 : 429;
    };
    runs.push({
      shape: shape.name,
      contestant: 'Envoy-style counter (INCRBY + EXPIRE a window, pipelined)',
      ...(await counted(
        `${shape.name}: the Envoy-style counter`,
        (ms) => drive(shape, consume, ms),
        () => pipelines,
      )),
    });
    client.disconnect();
  }
  for (const count of instanceCounts) {
    const instances = await startInstances(count, `cost:${process.pid}:${run++}:`);
    const send = async (key: number) => {
      const target = instances[Math.floor(Math.random() * instances.length)] as { url: string };
      const response = await fetch(`${target.url}/v1/pets?limit=1`, {
        headers: { authorization: keys[key]?.authorization as string },
      });
      await response.arrayBuffer();
      return response.status;
    };
    try {
      runs.push({
        shape: shape.name,
        contestant: `server, ${count} instance${count === 1 ? '' : 's'}`,
        ...(await counted(`${shape.name}: ${count} instance(s)`, (ms) => drive(shape, send, ms))),
      });
    } finally {
      for (const { child } of instances) {
        child.kill('SIGTERM');
        if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
      }
    }
  }
}
redis.stop();
await onPostgres(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);

const fixed = (n: number, digits: number) => n.toFixed(digits);
const table = [
  '| shape | contestant | requests | not 200 | commands / request | of which limits | of which upkeep | round trips / request | commands / s |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ...runs.map(
    (r) =>
      `| ${r.shape} | ${r.contestant} | ${r.requests} | ${r.requests - (r.byStatus[200] ?? 0)} | ${fixed(r.commandsPerRequest, 4)} | ${fixed(r.limitsPerRequest, 4)} | ${fixed(r.upkeepPerRequest, 4)} | ${fixed(r.roundTripsPerRequest, 4)} | ${fixed(r.commandsPerSecond, 1)} |`,
  ),
].join('\n');
process.stdout.write(`${table}\n`);
const results = join(root, 'bench-results');
mkdirSync(results, { recursive: true });
const file = join(results, `store-cost-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(file, `${JSON.stringify({ durationMs, warmupMs, node: process.version, runs }, null, 2)}\n`);
process.stdout.write(`\nWritten: ${file}\n`);
