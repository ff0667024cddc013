// The previous release, 1.1.0, built from its commit for the tests that run it beside this one (a rolling
// upgrade): the tree at that commit (`git archive`), installed and built with the machine's Node (1.1.0
// ran on Node 20 and 22; its better-sqlite3 12 is compiled for that Node, never for ours), kept in the
// temporary folder (one per checkout; not under node_modules, where TypeScript cannot name the old tree's
// types) so that a second run takes seconds. Undefined, after one line saying why, when the
// history or such a Node is missing (a shallow clone, a machine without Node 20 or 22).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onPath } from '@animal-store/test-support';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
/** The commit 1.1.0 was released from: its row of the releases table (docs/releasing.md). */
export const release11Commit = /^\| `1\.1\.0` +\| `([0-9a-f]{40})` +\|/m.exec(
  readFileSync(join(root, 'docs/releasing.md'), 'utf8'),
)?.[1] as string;
const checkout = createHash('sha256').update(root).digest('hex').slice(0, 12);
const home = join(tmpdir(), `animal-store-1.1.0-${checkout}`);

export type OldRelease = { node: string; serverDist: string };

const skip = (why: string): undefined => {
  process.stderr.write(`skipping the rolling upgrade from 1.1.0: ${why}\n`);
  return undefined;
};

/** A Node.js of a major 1.1.0 ran on (20 or 22), other than the one running the tests. */
function oldNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node', onPath('node')]) {
    if (!candidate || !existsSync(candidate)) continue;
    try {
      const major = execFileSync(candidate, ['-p', 'process.versions.node.split(".")[0]'], {
        encoding: 'utf8',
      }).trim();
      if (major === '20' || major === '22') return candidate;
    } catch {
      // not a runnable node
    }
  }
  return undefined;
}

export function release11(): OldRelease | undefined {
  const node = oldNode();
  if (!node) return skip('no Node.js 20 or 22 on this machine');
  const serverDist = join(home, 'apps/server/dist');
  const built = join(home, 'built'); // written once the build succeeded
  if (existsSync(built)) return { node, serverDist };
  try {
    execFileSync('git', ['cat-file', '-e', `${release11Commit}^{commit}`], { cwd: root, stdio: 'ignore' });
  } catch {
    return skip(`commit ${release11Commit.slice(0, 7)} is not in this clone's history`);
  }
  const pnpm = onPath('pnpm');
  if (!pnpm) return skip('no pnpm on the PATH');
  rmSync(home, { recursive: true, force: true });
  mkdirSync(home, { recursive: true });
  execFileSync('sh', ['-c', `git archive ${release11Commit} | tar -x -C "${home}"`], { cwd: root });
  // pnpm itself and every install script on the old Node: the PATH finds it first. Nothing of the run
  // that started these tests (turbo's TURBO_*, pnpm's npm_*) reaches the old tree's own turbo and pnpm.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(TURBO_|npm_|PNPM_)/i.test(name)),
  );
  Object.assign(env, { PATH: `${join(node, '..')}:${process.env.PATH ?? ''}`, CI: 'true' });
  const run = (...args: string[]) => {
    try {
      execFileSync(node, [realpathSync(pnpm), ...args], { cwd: home, env, encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      throw new Error(
        `building 1.1.0: pnpm ${args.join(' ')} failed:\n${`${stdout}${stderr}`.slice(-3_000)}`,
      );
    }
  };
  run('install', '--frozen-lockfile');
  run('--filter', '@animal-store/server...', 'run', 'build'); // the server and what it is built from
  writeFileSync(built, `${release11Commit}\n`);
  return { node, serverDist };
}
