// What `pnpm bench` prints: a table per question (the server against bare Express, validated Express and the
// floor; against what a user would pick instead; the other engines and workers; tracing; --against; the
// stores' cost; a refusal's cost), the single figures, the layers (--profile) and the goals.
import { cpus, totalmem } from 'node:os';
import { goalTable, type Judged } from './goals.js';
import type { Measure } from './measure.js';

export type Row = {
  scenario: string;
  measured: Record<string, Measure>;
  /** --against: this tree / that commit, the median of each round's ratio (req/s; CPU per request). */
  againstRatio?: { reqPerSec: number; cpuUsPerRequest: number; reqPerSecRange: [number, number] };
};
export type Refusal = { target: string; answered: Measure; refused: Measure };
export type Layer = { layer: string; usPerRequest: number; budgetUs?: number };

/** Everything a run measured, as the tables read it. */
export type RunResults = {
  options: { connections: number; duration: number; rounds: number };
  rows: Row[];
  refusals: Refusal[];
  /** The contestants beside the server, bare Express, validated Express, the floor and the peers. */
  extra: string[];
  against: string | undefined;
  backends: string[];
  /** The name of the PostgreSQL + Redis target with two workers. */
  redisWorkers: string;
  coldStartMs: { server: number; bareExpress: number; floor: number };
  peakRssUnderListLoadMb: number;
  metering: { recordNs: number; flushMs: number };
  usageFlushMs: number;
  layers: Layer[] | undefined;
  serverServed: number;
  goals: Judged[];
};

const fixed = (n: number, digits = 0) => n.toFixed(digits);
/**
 * A table after a blank line: its header, a separator as wide, its rows; nothing when it has no row (its
 * scenarios left out by --scenario, or what it compares not run).
 */
const table = (header: string, body: string[]): string[] =>
  body.length === 0 ? [] : ['', header, `|${'---|'.repeat(header.split(' | ').length)}`, ...body];
const m = (row: Row, name: string) => row.measured[name] as Measure;

/** The server against bare Express, validated Express and the floor. */
const floors = ({ rows }: RunResults) =>
  table(
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
  );

/** Ours (every variant) against what a user would pick instead. */
const peers = ({ rows, extra }: RunResults) =>
  table(
    '| scenario | ' +
      ['full', ...extra].map((n) => `${n} req/s | ${n} / usual Express | ${n} / Fastify`).join(' | ') +
      ' | usual Express req/s | Fastify req/s | CPU µs/req full/usual/Fastify | p99 ms full/usual/Fastify |',
    rows.map((row) => {
      const [usual, fast] = [m(row, 'usual Express'), m(row, 'Fastify')];
      const ours = ['server', ...extra].map((name) => {
        const r = m(row, name).reqPerSec;
        return `${fixed(r)} | ${fixed(r / usual.reqPerSec, 2)} | ${fixed(r / fast.reqPerSec, 2)}`;
      });
      const s = m(row, 'server');
      return `| ${row.scenario} | ${ours.join(' | ')} | ${fixed(usual.reqPerSec)} | ${fixed(fast.reqPerSec)} | ${[s, usual, fast].map((x) => fixed(x.cpuUsPerRequest)).join('/')} | ${[s, usual, fast].map((x) => x.p99).join('/')} |`;
    }),
  );

/** The other engines, workers and tracing against the server on SQLite with one worker. */
const variants = ({ rows, extra }: RunResults) => [
  ...table(
    `| scenario | SQLite, WORKERS=1 req/s | ${extra.map((e) => `${e} req/s | ${e} / WORKERS=1`).join(' | ')} |`,
    extra.length === 0
      ? []
      : rows.map((row) => {
          const base = m(row, 'server').reqPerSec;
          return `| ${row.scenario} | ${fixed(base)} | ${extra.map((e) => `${fixed(m(row, e).reqPerSec)} | ${fixed(m(row, e).reqPerSec / base, 2)}`).join(' | ')} |`;
        }),
  ),
  ...table(
    '| scenario | CPU µs/req tracing off | traced (every trace) | traced 10 % | cost µs/req every / 10 % |',
    rows.map((row) => {
      const [off, on, tenth] = ['server', 'traced', 'traced 10 %'].map((n) => m(row, n).cpuUsPerRequest) as [
        number,
        number,
        number,
      ];
      return `| ${row.scenario} | ${fixed(off)} | ${fixed(on)} | ${fixed(tenth)} | ${fixed(on - off)} / ${fixed(tenth - off)} |`;
    }),
  ),
];

/** --against: this tree / that commit (also the release note's table: release-note.ts). */
export const againstTable = ({ rows, against }: Pick<RunResults, 'rows' | 'against'>) =>
  table(
    `| scenario | this tree req/s | ${against} req/s | this tree / ${against} | lowest–highest round | CPU µs/req this tree / ${against} | CPU ${against} / this tree |`,
    against === undefined
      ? []
      : rows.map((row) => {
          const [now, then] = [m(row, 'server'), m(row, against)];
          const ratio = row.againstRatio as NonNullable<Row['againstRatio']>;
          return `| ${row.scenario} | ${fixed(now.reqPerSec)} | ${fixed(then.reqPerSec)} | ${fixed(ratio.reqPerSec, 2)} | ${ratio.reqPerSecRange.map((r) => fixed(r, 2)).join('–')} | ${fixed(now.cpuUsPerRequest)} / ${fixed(then.cpuUsPerRequest)} | ${fixed(1 / ratio.cpuUsPerRequest, 2)} |`;
        }),
  );

/** What a request costs the shared stores, and the cores two workers keep busy. */
const stores = ({ rows, backends, redisWorkers, extra }: RunResults) => {
  const onRedis = backends.includes('postgres+redis');
  const cost = (row: Row, name: string) =>
    ` ${fixed(m(row, name).redisCommandsPerRequest ?? Number.NaN, 4)}, ${fixed(m(row, name).redisCommandsPerSecond ?? Number.NaN, 1)} |`;
  return [
    ...table(
      `| scenario | ${backends.map((b) => `${b} PostgreSQL transactions / request`).join(' | ')}${onRedis ? ` | postgres+redis Redis commands / request, and / s (scripts' own commands counted) | ${redisWorkers}, the same |` : ' |'}`,
      backends.length === 0
        ? []
        : rows.map((row) => {
            const per = backends.map((b) => fixed(m(row, b).postgresTransactionsPerRequest ?? Number.NaN, 3));
            const redis = onRedis ? cost(row, 'postgres+redis') + cost(row, redisWorkers) : '';
            return `| ${row.scenario} | ${per.join(' | ')} |${redis}`;
          }),
    ),
    '',
    ...(rows.length && extra.includes('WORKERS=2')
      ? [
          `cores kept busy (of ${cpus().length}) by WORKERS=2 and by the load generator: ${rows
            .map((row) => {
              const busy = m(row, 'WORKERS=2').coresBusy;
              return `${row.scenario} ${fixed(busy.target, 2)} + ${fixed(busy.generator, 2)}`;
            })
            .join('; ')}`,
        ]
      : []),
  ];
};

/** What a refusal costs against an answer. */
const refusalCost = ({ refusals }: RunResults) =>
  table(
    '| the cost of a refusal (GET /v1/pets/{id}) | 200 CPU µs/req | 429 CPU µs/req | 429 / 200 | 200 req/s | 429 req/s | Redis commands per 200 / per 429 |',
    refusals.map(({ target, answered: a, refused: r }) => {
      const redisPer =
        a.redisCommandsPerRequest === undefined
          ? '–'
          : `${fixed(a.redisCommandsPerRequest, 4)} / ${fixed(r.redisCommandsPerRequest ?? Number.NaN, 4)}`;
      return `| ${target} | ${fixed(a.cpuUsPerRequest)} | ${fixed(r.cpuUsPerRequest)} | ${fixed(r.cpuUsPerRequest / a.cpuUsPerRequest, 2)} | ${fixed(a.reqPerSec)} | ${fixed(r.reqPerSec)} | ${redisPer} |`;
    }),
  );

/** The single figures: cold starts, memory, metering; then the layers (--profile). */
const figures = (r: RunResults) => {
  const listCpuUs = r.rows.find((row) => row.scenario.startsWith('GET /v1/pets?'))?.measured.server
    ?.cpuUsPerRequest;
  const share = listCpuUs
    ? ` (${fixed(r.metering.recordNs / 10 / listCpuUs, 3)} % of the full server's ${fixed(listCpuUs)} µs of CPU per list request)`
    : '';
  return [
    '',
    `cold start to first 200: server ${fixed(r.coldStartMs.server)} ms, bare Express ${fixed(r.coldStartMs.bareExpress)} ms, floor ${fixed(r.coldStartMs.floor)} ms`,
    ...(r.peakRssUnderListLoadMb
      ? [`peak RSS of the server under the list load: ${fixed(r.peakRssUnderListLoadMb, 1)} MB`]
      : []),
    `usage metering: ${fixed(r.metering.recordNs)} ns per request${share}, plus one write of every key's day every ${r.usageFlushMs / 1000} s (${fixed(r.metering.flushMs, 1)} ms for 1,000 keys)`,
    ...table(
      `| layer of this tree's server (--profile: its main thread's busy time over the ${r.serverServed} requests of every measured run) | CPU µs/req | budget |`,
      (r.layers ?? []).map(
        (l) =>
          `| ${l.layer} | ${fixed(l.usPerRequest, 1)} | ${l.budgetUs === undefined ? '–' : `≤ ${l.budgetUs}`} |`,
      ),
    ),
  ];
};

/** The whole text a run prints. */
export function report(r: RunResults): string {
  const { connections, duration, rounds } = r.options;
  const lines = [
    `Animal Store bench: ${connections} connections, ${duration} s per run, median of ${rounds} round(s); ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fixed(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
    ...floors(r),
    ...peers(r),
    ...variants(r),
    ...againstTable(r),
    ...stores(r),
    ...refusalCost(r),
    ...figures(r),
    '',
    'The goals (docs/performance.md), as this run measured them:',
    ...goalTable(r.goals),
  ];
  return lines.join('\n').replace(/\n{3,}/g, '\n\n');
}
