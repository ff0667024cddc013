// The store-cost bench (store-cost.ts) as a user runs it: --help, a mistyped option, and one short real run
// (a redis-server of its own, PostgreSQL, one instance of the built server): it counts a script's own
// commands (rate-limiter-flexible's consume is its script and three commands, per window), a pipeline as one
// round trip (the Envoy-style counter's), and writes its results.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const main = fileURLToPath(new URL('../dist/store-cost.js', import.meta.url));
const bench = (...args: string[]) =>
  spawnSync(process.execPath, [main, ...args], { encoding: 'utf8', timeout: 120_000 });
const slowStart = { timeout: 150_000 };

it('--help prints every option and measures nothing', slowStart, () => {
  const { status, stdout, stderr } = bench('--help');
  expect(status).toBe(0);
  for (const option of ['--duration', '--warmup', '--instances', '--shape']) expect(stdout).toContain(option);
  expect(stderr).toBe('');
});

it.each([
  [['--instance', '2'], /^pnpm bench:store-cost: .*--instance/],
  [['--instances', '0'], /^pnpm bench:store-cost: --instances 0: whole numbers/],
  [
    ['--shape', 'no such shape'],
    /^pnpm bench:store-cost: --shape no such shape: no shape's name contains it/,
  ],
])('%j is one line and exit 2, without a stack trace', slowStart, (args, line) => {
  const { status, stderr, stdout } = bench(...args);
  expect(status).toBe(2);
  expect(stderr.split('\n')[0]).toMatch(line);
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(stdout).toBe('');
});

it('counts what one busy key costs Redis on one instance, beside a per-request counter', slowStart, () => {
  const { status, stdout, stderr } = bench(
    '--shape',
    'busy',
    '--shape',
    'no such shape', // shapes asked are kept if any text matches: this one adds none
    '--instances',
    '1',
    '--duration',
    '2',
    '--warmup',
    '1',
  );
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(status).toBe(0);
  const written = /Written: (\S+)/.exec(stdout)?.[1] as string;
  type Run = {
    contestant: string;
    requests: number;
    byStatus: Record<string, number>;
    commandsPerRequest: number;
    roundTripsPerRequest: number;
  };
  const { runs } = JSON.parse(readFileSync(written, 'utf8')) as { runs: Run[] };
  rmSync(written);
  const [floor, envoy, server] = runs;
  expect(floor?.contestant).toMatch(/rate-limiter-flexible/);
  // Two windows, each an EVALSHA running SET NX, INCRBY and PTTL: 8 (an EXPIRE now and then on top).
  expect(floor?.commandsPerRequest).toBeGreaterThanOrEqual(8);
  expect(floor?.commandsPerRequest).toBeLessThan(8.01);
  // Round trips, read from MONITOR: the two EVALSHAs a request sends, the scripts' own commands not counted.
  expect(floor?.roundTripsPerRequest).toBeGreaterThanOrEqual(2);
  expect(floor?.roundTripsPerRequest).toBeLessThan(2.01);
  // The Envoy-style counter: per window INCRBY and EXPIRE, a request's four in one pipeline (its sender
  // counts the pipelines: MONITOR shows their commands one by one).
  expect(envoy?.contestant).toMatch(/Envoy-style/);
  expect(envoy?.byStatus).toEqual({ 200: envoy?.requests });
  expect(envoy?.commandsPerRequest).toBeGreaterThanOrEqual(4);
  expect(envoy?.commandsPerRequest).toBeLessThan(4.01);
  expect(envoy?.roundTripsPerRequest).toBe(1);
  expect(server?.contestant).toBe('server, 1 instance');
  expect(server?.byStatus).toEqual({ 200: server?.requests });
  // Leases: a busy key asks the store a few times a second, not per request: a fraction of what the
  // per-request counter costs. (How many requests two seconds carry depends on how busy the machine is:
  // 91 beside the whole suite, thousands alone; the bound holds from a few dozen.)
  expect(server?.requests).toBeGreaterThan(20);
  expect(server?.commandsPerRequest).toBeGreaterThan(0);
  expect(server?.commandsPerRequest).toBeLessThan((floor?.commandsPerRequest ?? 0) / 4);
  expect(stdout).toMatch(/\| one busy key, 10 connections \| server, 1 instance \| \d+ \| 0 \|/);
});
