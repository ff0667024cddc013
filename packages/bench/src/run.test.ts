// The bench's command line (run.ts), as a user meets it: --help, and a mistyped option.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const run = fileURLToPath(new URL('../dist/run.js', import.meta.url));
const bench = (...args: string[]) => spawnSync(process.execPath, [run, ...args], { encoding: 'utf8' });
// A start of the built bench loads the server's package: 0.7 s on a quiet machine, 8 s once with both
// cores busy (CI), past vitest's default 5 s. Timed by the suite's hook, not by the start's speed.
const slowStart = { timeout: 60_000 };

it.each(['--help', '-h'])('%s prints every option and measures nothing', slowStart, (flag) => {
  const { status, stdout, stderr } = bench(flag);
  expect(status).toBe(0);
  for (const option of ['--duration', '--connections', '--rounds', '--scenario', '--backend', '--profile'])
    expect(stdout).toContain(option);
  expect(stderr).toBe('');
});

it('an unknown option is one line naming it, the usage, and exit 2, without a stack trace', slowStart, () => {
  const { status, stderr, stdout } = bench('--durration', '5');
  expect(status).toBe(2);
  expect(stderr.split('\n')[0]).toMatch(/^pnpm bench: .*--durration/);
  expect(stderr).toContain('Usage: pnpm bench');
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(stdout).toBe('');
});
