// `pnpm bench --against <ref>`: the server of an earlier commit (a release of docs/releasing.md's table, as
// 2.0.0 or v2.0.0, or any git ref), built in a temporary folder (test-support's builtCommit) and given a store
// of its own seeded as this tree's is, through its own keys command and its own API: 1,000 pets and an
// enterprise key whose limits never interfere. Whatever its schema, the data is the same.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { builtCommit, releasesOf } from '@animal-store/test-support';
import { entryOf, flagsOf, root } from './server-command.js';

/**
 * The commit `ref` names (a release's row of the releases table, else whatever git resolves it to), and the
 * name its build is kept under: a release's version, so that the upgrade tests' build of it serves here too.
 */
export function commitOf(ref: string): { commit: string; name: string } {
  const release = releasesOf(root).find((r) => r.version === ref.replace(/^v/, ''));
  if (release) return { commit: release.commit, name: release.version };
  try {
    const commit = execFileSync('git', ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], {
      cwd: root,
      encoding: 'utf8',
    }).trim();
    return { commit, name: `commit-${commit.slice(0, 12)}` };
  } catch {
    throw new Error(`--against ${ref}: neither a release of docs/releasing.md nor a commit of this clone`);
  }
}

/** The tree at `commit` (named `ref`), built: how to start its server, and how to give it a store. */
export function earlierServer(ref: string, { commit, name }: ReturnType<typeof commitOf>) {
  const built = builtCommit(root, commit, process.execPath, name);
  if ('missing' in built) throw new Error(`--against ${ref}: ${built.missing}`);
  const { home } = built;
  return {
    /** Node's arguments for its server, with `more` flags (--cpu-prof) before its main. */
    args: (more: string[] = []) => [...flagsOf(home), ...more, entryOf(home)],
    /**
     * An enterprise key made by its keys command in the store at `databaseUrl`: of limits no load reaches,
     * or of `perMinute` (the refusal's cost: 1).
     */
    key(databaseUrl: string, perMinute = 1e12): string {
      const made = execFileSync(
        process.execPath,
        [
          join(home, 'apps/server/dist/cli/keys.js'),
          'create',
          '--json',
          '--plan',
          'enterprise',
          '--per-minute',
          String(perMinute),
          '--per-day',
          String(1e12),
          '--label',
          'bench',
        ],
        { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }, encoding: 'utf8' },
      );
      const key = /"key"\s*:\s*"([^"]+)"/.exec(made)?.[1];
      if (!key) throw new Error(`--against ${ref}: its keys command made no key:\n${made}`);
      return key;
    },
  };
}

/** The bench's 1,000 pets, created through a running server's API (ids 1 to 1,000 in a new store). */
export async function seedThroughApi(url: string, authorization: string, pets: readonly object[]) {
  for (const pet of pets) {
    const res = await fetch(`${url}/v1/pets`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify(pet),
    });
    if (res.status !== 201) throw new Error(`seeding through ${url}: ${res.status} ${await res.text()}`);
  }
}
