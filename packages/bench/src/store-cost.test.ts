// The store-cost bench (store-cost.ts) as a user runs it: --help, a mistyped option, and one short real run
// (a redis-server of its own, PostgreSQL, one instance of the built server): it counts a script's own
// commands (rate-limiter-flexible's consume is its script and three commands, per window) and writes its
// results.
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
  };
  const { runs } = JSON.parse(readFileSync(written, 'utf8')) as { runs: Run[] };
  rmSync(written);
  const [floor, server] = runs;
  expect(floor?.contestant).toMatch(/rate-limiter-flexible/);
  // Two windows, each an EVALSHA running SET NX, INCRBY and PTTL: 8 (an EXPIRE now and then on top).
  expect(floor?.commandsPerRequest).toBeGreaterThanOrEqual(8);
  expect(floor?.commandsPerRequest).toBeLessThan(8.01);
  expect(server?.contestant).toBe('server, 1 instance');
  expect(server?.byStatus).toEqual({ 200: server?.requests });
  expect(server?.requests).toBeGreaterThan(100);
  // Leases: a busy key asks the store a few times a second, not per request.
  expect(server?.commandsPerRequest).toBeGreaterThan(0);
  expect(server?.commandsPerRequest).toBeLessThan(1);
  expect(stdout).toMatch(/\| one busy key, 10 connections \| server, 1 instance \| \d+ \| 0 \|/);
});
