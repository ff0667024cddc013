// One measured run of a contestant (autocannon against its URL), what it cost the contestant, the load
// generator and the box, and the medians of a contestant's rounds.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import type { BenchRedis } from './private-redis.js';

export type Target = { name: string; url: string; child: ChildProcess };
export type Request = { method: 'GET' | 'POST'; path: string; body?: string };

export type Measure = {
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

/** CPU time (user + system) a process and its children (cluster workers) have used so far, from /proc. */
const cpuMs = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const own = (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean);
  return own + children.reduce((sum, child) => sum + cpuMs(Number(child)), 0);
};
export const peakRssMb = (pid: number) =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN) / 1024;

export const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};
/**
 * This tree against an earlier one (--against), from their rounds in pairs: the median ratio of throughput
 * and of CPU a request, and the lowest and highest round's throughput ratio. A round in which either
 * answered nothing (a box so loaded that a short run got no CPU) compared nothing: it is left out.
 */
export function againstRatio(now: Measure[], then: Measure[]) {
  const pairs = now.flatMap((x, i) => {
    const earlier = then[i];
    return earlier && x.reqPerSec > 0 && earlier.reqPerSec > 0 ? [[x, earlier] as const] : [];
  });
  const throughput = pairs.map(([x, earlier]) => x.reqPerSec / earlier.reqPerSec);
  return {
    reqPerSec: median(throughput),
    reqPerSecRange: [Math.min(...throughput), Math.max(...throughput)] as [number, number],
    cpuUsPerRequest: median(pairs.map(([x, earlier]) => x.cpuUsPerRequest / earlier.cpuUsPerRequest)),
  };
}

/** Each figure of a contestant's rounds, the median of its rounds. */
export const medianOf = (all: Measure[]): Measure => ({
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

/**
 * How every run is measured: `connections` for `duration` seconds each; the Redis commands of a target on
 * PostgreSQL + Redis (the bench's own `redis`), and the PostgreSQL transactions of one on PostgreSQL.
 * `served`: the requests each process served in measured runs (by pid), over which a profile's busy time
 * is divided.
 */
export function measurer(options: {
  connections: number;
  duration: number;
  redis: BenchRedis | undefined;
  postgresTransactions: () => Promise<number>;
}) {
  const { connections, duration, redis, postgresTransactions } = options;
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
    const pid = target.child.pid as number;
    const cpuBefore = cpuMs(pid);
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
    served.set(pid, (served.get(pid) ?? 0) + result.requests.total);
    const targetCpuMs = cpuMs(pid) - cpuBefore;
    const wallMs = performance.now() - wallBefore;
    const commands = redis?.commands() ?? 0;
    return {
      reqPerSec: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      non2xx: result.non2xx,
      errors: result.errors,
      cpuUsPerRequest: (targetCpuMs * 1000) / result.requests.total,
      coresBusy: coresBusy(targetCpuMs, generatorBefore, wallBefore, machineBefore),
      ...(onRedis && {
        redisCommandsPerRequest: commands / result.requests.total,
        redisCommandsPerSecond: (commands * 1000) / wallMs,
      }),
      ...(onPostgres && {
        postgresTransactionsPerRequest:
          ((await postgresTransactions()) - transactionsBefore) / result.requests.total,
      }),
    };
  }
  return { measureOnce, served };
}
