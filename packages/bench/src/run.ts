// `pnpm bench [--duration s] [--connections n] [--profile]`: the real server (built from this tree, with
// validation, rate limiting and logging on) against the floor (src/floor.ts), both on loopback over one
// SQLite file seeded with 1,000 pets and an enterprise key whose limits never interfere; autocannon drives
// them in alternation with the same connections and duration. Prints one table and writes
// bench-results/<timestamp>.json. --profile runs the server under --cpu-prof (bench-results/profiles/).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openDatabase } from '@animal-store/server/store/database';
import { createKeyStore } from '@animal-store/server/store/keys';
import { createPetStore } from '@animal-store/server/store/pets';
import autocannon from 'autocannon';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    profile: { type: 'boolean', default: false },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const root = fileURLToPath(new URL('../../../', import.meta.url));
const results = join(root, 'bench-results');
const serverMain = join(root, 'apps/server/dist/main.js');
const floorMain = fileURLToPath(new URL('../dist/floor.js', import.meta.url));

// The store: 1,000 pets and one enterprise key with limits far above what the load can reach.
const dir = mkdtempSync(join(tmpdir(), 'animal-store-bench-'));
const databasePath = join(dir, 'bench.db');
const db = openDatabase(databasePath);
const pets = createPetStore(db);
const statuses = ['available', 'pending', 'sold'] as const;
for (let i = 0; i < 1000; i++)
  pets.create({ name: `Pet ${i}`, categoryId: 1 + (i % 10), status: statuses[i % 3] as 'available' });
const { key } = createKeyStore(db).create({
  plan: 'enterprise',
  quota: { perMinute: 1e12, perDay: 1e12 },
  label: 'bench',
});
db.close();
const authorization = `Bearer ${key}`;

type Target = { name: string; url: string; child: ChildProcess };
async function start(name: string, args: string[]): Promise<Target & { coldStartMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    env: { ...process.env, DATABASE_URL: databasePath, PORT: '0', NODE_ENV: 'production', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
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
    (await fetch(`${url}/v1/pets`, { headers: { authorization } }).catch(() => undefined))?.status !== 200
  ) {
    await new Promise((r) => setTimeout(r, 5));
  }
  return { name, url, child, coldStartMs: performance.now() - started };
}

const peakRssMb = (pid: number) =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN) / 1024;

mkdirSync(join(results, 'profiles'), { recursive: true });
const profile = values.profile ? ['--cpu-prof', '--cpu-prof-dir', join(results, 'profiles')] : [];
const server = await start('server', [...profile, serverMain]);
const floor = await start('floor', [floorMain]);

const scenarios = [
  { name: 'GET /v1/pets?limit=20', method: 'GET', path: '/v1/pets?limit=20' },
  {
    name: 'GET /v1/pets?limit=100&status=available',
    method: 'GET',
    path: '/v1/pets?limit=100&status=available',
  },
  {
    name: 'POST /v1/pets',
    method: 'POST',
    path: '/v1/pets',
    body: JSON.stringify({ name: 'Bench', categoryId: 1 }),
  },
  { name: 'GET /v1/pets/{id}', method: 'GET', path: '/v1/pets/500' },
] as const;

type Measure = { reqPerSec: number; p50: number; p99: number; non2xx: number; errors: number };
const rows: { scenario: string; server: Measure; floor: Measure }[] = [];
let peakRssUnderListLoad = 0;
for (const scenario of scenarios) {
  const measured: Record<string, Measure> = {};
  for (const target of [server, floor]) {
    const result = await autocannon({
      url: `${target.url}${scenario.path}`,
      method: scenario.method,
      headers: { authorization, 'content-type': 'application/json' },
      ...('body' in scenario && { body: scenario.body }),
      connections,
      duration,
    });
    measured[target.name] = {
      reqPerSec: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      non2xx: result.non2xx,
      errors: result.errors,
    };
  }
  if (scenario.method === 'GET' && scenario.path.startsWith('/v1/pets?')) {
    peakRssUnderListLoad = Math.max(peakRssUnderListLoad, peakRssMb(server.child.pid as number));
  }
  rows.push({
    scenario: scenario.name,
    server: measured.server as Measure,
    floor: measured.floor as Measure,
  });
}

for (const target of [server, floor]) {
  target.child.kill('SIGTERM');
  await new Promise((r) => target.child.once('exit', r));
}
rmSync(dir, { recursive: true, force: true });

const fixed = (n: number, digits = 0) => n.toFixed(digits);
const lines = [
  `Animal Store bench: ${connections} connections, ${duration} s per run; ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fixed(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
  '',
  '| scenario | server req/s | floor req/s | ratio | server p50/p99 ms | floor p50/p99 ms | p99 ratio | non-2xx |',
  '|---|---|---|---|---|---|---|---|',
  ...rows.map(
    ({ scenario, server: s, floor: f }) =>
      `| ${scenario} | ${fixed(s.reqPerSec)} | ${fixed(f.reqPerSec)} | ${fixed(s.reqPerSec / f.reqPerSec, 2)} | ${s.p50}/${s.p99} | ${f.p50}/${f.p99} | ${fixed(s.p99 / Math.max(f.p99, 1), 2)} | ${s.non2xx + f.non2xx} |`,
  ),
  '',
  `cold start to first 200: server ${fixed(server.coldStartMs)} ms, floor ${fixed(floor.coldStartMs)} ms`,
  `peak RSS of the server under the list load: ${fixed(peakRssUnderListLoad, 1)} MB`,
];
process.stdout.write(`${lines.join('\n')}\n`);
const report = {
  date: new Date().toISOString(),
  machine: {
    cpus: cpus().length,
    model: cpus()[0]?.model,
    memoryGiB: totalmem() / 2 ** 30,
    node: process.version,
  },
  options: { connections, duration },
  rows,
  coldStartMs: { server: server.coldStartMs, floor: floor.coldStartMs },
  peakRssUnderListLoadMb: peakRssUnderListLoad,
};
const file = join(results, `${report.date.replace(/[:.]/g, '-')}.json`);
writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
process.stdout.write(`written: ${file}\n`);
