// An earlier commit of this repository, installed and built, for what runs it beside the working tree: the
// upgrade tests (apps/server/test/support/releases.ts) and `pnpm bench --against <ref>`. The tree at that
// commit (`git archive`) goes to the temporary folder, under a name from its commit and the Node.js it is
// built on (every clone and every run shares it; not under node_modules, where TypeScript cannot name the old
// tree's types), so that a second run takes seconds.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onPath } from './tools.js';

/** The releases of the repository at `root`, oldest first: each row of docs/releasing.md's releases table. */
export function releasesOf(root: string): { version: string; commit: string }[] {
  const table = readFileSync(join(root, 'docs/releasing.md'), 'utf8');
  return [...table.matchAll(/^\| `(\d+\.\d+\.\d+)` +\| `([0-9a-f]{40})` +\|/gm)].map(
    ([, version, commit]) => ({
      version: version as string,
      commit: commit as string,
    }),
  );
}

/** A built commit: the folder its tree is in. Or why it could not be built, in one line. */
export type BuiltCommit = { home: string } | { missing: string };

/**
 * The tree at `commit` of the repository at `root`, installed with `pnpm install --frozen-lockfile` and its
 * server built (with what it is built from), pnpm and every install script running on `node`. `name` names
 * it in a failure. A missing commit (a shallow clone) or a missing pnpm is answered, not thrown.
 */
export function builtCommit(root: string, commit: string, node: string, name = commit): BuiltCommit {
  // Keyed by the Node.js version, not its path: npx puts one version under many paths.
  const nodeVersion =
    node === process.execPath
      ? process.version
      : execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  const builtFor = createHash('sha256').update(`${commit} ${nodeVersion}`).digest('hex').slice(0, 12);
  const home = join(tmpdir(), `animal-store-${name.replace(/[^\w.-]/g, '_')}-${builtFor}`);
  if (existsSync(home)) return { home }; // only a finished build is moved there
  try {
    execFileSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: root, stdio: 'ignore' });
  } catch {
    return { missing: `commit ${commit.slice(0, 7)} is not in this clone's history` };
  }
  const pnpm = onPath('pnpm');
  if (!pnpm) return { missing: 'no pnpm on the PATH' };
  // Built in a folder of its own, then renamed into place: a run beside this one (another clone) that builds
  // the same commit at the same time cannot see half a build.
  const building = mkdtempSync(`${home}.building-`);
  execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C "${building}"`], { cwd: root });
  // pnpm itself and every install script on `node`: the PATH finds it first. Nothing of the run that started
  // this one (turbo's TURBO_*, pnpm's npm_*) reaches the old tree's own turbo and pnpm.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([variable]) => !/^(TURBO_|npm_|PNPM_)/i.test(variable)),
  );
  Object.assign(env, { PATH: `${join(node, '..')}:${process.env.PATH ?? ''}`, CI: 'true' });
  const run = (...args: string[]) => {
    try {
      execFileSync(node, [realpathSync(pnpm), ...args], {
        cwd: building,
        env,
        encoding: 'utf8',
        stdio: 'pipe',
      });
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      rmSync(building, { recursive: true, force: true });
      throw new Error(
        `building ${name}: pnpm ${args.join(' ')} failed:\n${`${stdout}${stderr}`.slice(-3_000)}`,
      );
    }
  };
  run('install', '--frozen-lockfile');
  run('--filter', '@animal-store/server...', 'run', 'build'); // the server and what it is built from
  try {
    renameSync(building, home);
  } catch {
    rmSync(building, { recursive: true, force: true }); // the other run's build is there first
  }
  return { home };
}
