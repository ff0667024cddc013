// A scratch copy of this working tree for the slow rehearsals (registry.test.ts, recipes.test.ts): its files
// as git lists them (tracked and new, not ignored: no node_modules, no build output), a git repository of
// its own, and its own install.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { withoutNpxOptions } from '@animal-store/test-support';

const exec = promisify(execFile);
export const repo = fileURLToPath(new URL('../../../', import.meta.url));

/** The environment of the commands below, without an enclosing npx's options (see withoutNpxOptions). */
const inherited = withoutNpxOptions();
/** Runs a shell command in `cwd` (CI unset: the scratch copy's tests run as a contributor's would). */
export const sh = (command: string, cwd: string, env: Record<string, string> = {}) =>
  exec('sh', ['-c', command], { cwd, env: { ...inherited, CI: '', ...env }, maxBuffer: 1 << 26 });

/** Copies the working tree's files as git lists them (tracked and new, not ignored) to `dir`. */
export async function copyWorkingTree(dir: string): Promise<void> {
  const { stdout } = await exec('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: repo,
    maxBuffer: 1 << 26,
  });
  for (const file of stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(repo, file))) continue; // deleted in the working tree, not yet in the index
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(repo, file), join(dir, file));
  }
}

/**
 * Copies the working tree to `dir`, makes it a git repository (`commit`: with everything committed, as a
 * branch's base), and installs it (before: `prepare`, e.g. an .npmrc of its own).
 */
export async function scratchCopy(
  dir: string,
  options: { commit?: boolean; prepare?: () => void } = {},
): Promise<void> {
  await copyWorkingTree(dir);
  options.prepare?.();
  await exec('git', ['init', '-q', '-b', 'main'], { cwd: dir });
  if (options.commit)
    await sh('git add -A && git -c user.name=rehearsal -c user.email=rehearsal@test commit -qm base', dir);
  await sh('pnpm install --frozen-lockfile --prefer-offline', dir);
}
