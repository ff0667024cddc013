// The README's and the client README's command for a client tarball, exactly as written, on a fresh clone
// of this repository (its committed files only: generated folders that git ignores are not there), after
// the Quick start's install: it must leave one tarball of the client. It failed once because the client's
// contract copy was made only when the build went through turbo.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { withoutNpxOptions } from '@animal-store/test-support';
import { afterAll, expect, it } from 'vitest';

const execute = promisify(execFile);
/** Runs a command; a failure says what it printed. */
const run = async (
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
) => {
  try {
    return await execute(command, args, { ...options, maxBuffer: 1 << 26 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${stdout ?? ''}\n${stderr ?? ''}`.slice(-4000));
  }
};
const repository = fileURLToPath(new URL('../../../', import.meta.url));
const clone = join(mkdtempSync(join(tmpdir(), 'animal-store-clone-')), 'animal-store');
afterAll(() => rmSync(clone, { recursive: true, force: true }));

/** The one fenced command of `file` that packs the client. */
const packCommand = (file: string) => {
  const lines = readFileSync(join(repository, file), 'utf8').split('\n');
  const found = lines.filter((line) => line.includes('--filter @animal-store/client build'));
  expect(found, file).toHaveLength(1);
  return found[0] as string;
};

// As the reader's shell would have it: without an enclosing npx's options (see withoutNpxOptions).
const env = withoutNpxOptions();

it("the README's client tarball command works on a fresh clone after the Quick start's install", async () => {
  const command = packCommand('README.md');
  expect(packCommand('packages/client/README.md')).toBe(command);
  await run('git', ['clone', '--quiet', '--no-hardlinks', repository, clone]);
  expect(readdirSync(join(clone, 'packages/client/src'))).not.toContain('generated');
  await run('pnpm', ['install', '--frozen-lockfile', '--prefer-offline'], { cwd: clone, env });
  await run('sh', ['-c', command], { cwd: clone, env });
  expect(readdirSync(join(clone, 'packages/client')).filter((f) => f.endsWith('.tgz'))).toEqual([
    expect.stringMatching(/^animal-store-client-\d+\.\d+\.\d+\.tgz$/),
  ]);
}, 300_000);
