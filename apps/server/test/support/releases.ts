// The earlier releases, each built from its commit (its row of the releases table, docs/releasing.md) for
// the tests that run one beside this release or roll a deployment from it: the tree at that commit, installed
// and built on a Node.js it ran on (test-support's built-commit.ts: once per release and machine). 1.x loads
// better-sqlite3 12, built for Node 20 and 22 only (it aborts on Node 24.19 and later): it runs on the
// machine's Node 20 or 22. 2.x loads better-sqlite3 13's prebuilt N-API binary and runs on the Node running
// the tests. Undefined, after one line saying why, when the history or such a Node is missing (a shallow
// clone, a machine without Node 20 or 22).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtCommit, onPath, releasesOf, spawnUntilReady } from '@animal-store/test-support';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const releases = releasesOf(root);

/**
 * The earlier releases a deployment may be upgraded from (docs/upgrading.md): every row of the releases
 * table, so a release is rehearsed from the day its row is written. A checkout is at or after the newest.
 */
export const earlierReleases: readonly string[] = releases.map((r) => r.version);
if (earlierReleases.length === 0) throw new Error('docs/releasing.md: the releases table has no row');
export type EarlierVersion = string;

/** A built earlier release: its Node.js, and its server's and keys command's entry points. */
export type OldRelease = {
  version: EarlierVersion;
  commit: string;
  node: string;
  main: string;
  keys: string;
};

/** The commit `version` was released from: its row of the releases table. */
export function releaseCommit(version: EarlierVersion): string {
  const commit = releases.find((r) => r.version === version)?.commit;
  if (!commit) throw new Error(`docs/releasing.md has no row for ${version}`);
  return commit;
}

const skip = (version: string, why: string): undefined => {
  process.stderr.write(`skipping what runs ${version}: ${why}\n`);
  return undefined;
};

/** A Node.js of a major 1.x ran on (20 or 22), other than the one running the tests. */
function nodeOf1x(): string | undefined {
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

/**
 * `version` built (once per machine: test-support's builtCommit, under a name from its commit and the Node.js
 * it runs on), or undefined after one line saying why it cannot be.
 */
export function oldRelease(version: EarlierVersion): OldRelease | undefined {
  const node = version.startsWith('1.') ? nodeOf1x() : process.execPath;
  if (!node) return skip(version, 'no Node.js 20 or 22 on this machine');
  const commit = releaseCommit(version);
  const built = builtCommit(root, commit, node, version);
  if ('missing' in built) return skip(version, built.missing);
  const dist = join(built.home, 'apps/server/dist');
  return { version, commit, node, main: join(dist, 'main.js'), keys: join(dist, 'cli/keys.js') };
}

/** `release`'s server on `env` on a loopback port, until its listening line; its URL beside it. */
export async function startRelease(release: OldRelease, env: Record<string, string>) {
  const spawned = await spawnUntilReady(release.node, [release.main], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', ...env },
    ready: (output) => output.includes('"msg":"listening"'),
  });
  return { ...spawned, url: /"url":"([^"]+)"/.exec(spawned.output())?.[1] as string };
}
