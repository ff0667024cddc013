// The bench's command line (run.ts), as a user meets it: --help, and a mistyped option.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const run = fileURLToPath(new URL('../dist/run.js', import.meta.url));
const bench = (...args: string[]) => spawnSync(process.execPath, [run, ...args], { encoding: 'utf8' });

it('--help prints every option and measures nothing', () => {
  const { status, stdout, stderr } = bench('--help');
  expect(status).toBe(0);
  for (const option of ['--duration', '--connections', '--rounds', '--scenario', '--backend', '--profile'])
    expect(stdout).toContain(option);
  expect(stderr).toBe('');
});

it('an unknown option is one line naming it, the usage, and exit 2, without a stack trace', () => {
  const { status, stderr, stdout } = bench('--durration', '5');
  expect(status).toBe(2);
  expect(stderr.split('\n')[0]).toMatch(/^pnpm bench: .*--durration/);
  expect(stderr).toContain('Usage: pnpm bench');
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(stdout).toBe('');
});
