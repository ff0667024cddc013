// A rolling upgrade of containers (docs/upgrading.md): from the newest release's image, built from its
// commit, to this checkout's (support/image-setup.ts) and back, one container at a time on the host's
// PostgreSQL and Redis, under load.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { enterprise, podman } from '@animal-store/test-support';
import { describe, expect, it } from 'vitest';
import { freshStore } from '../support/harness.js';
import {
  caBuildArgs,
  containerNames,
  image,
  imageBuiltBeforeAll,
  repo,
  runImageOf,
} from '../support/image.js';
import { type EarlierVersion, earlierReleases, releaseCommit } from '../support/releases.js';
import { type Instance, noBans, perDay, rehearse, roll } from '../support/rolling-load.js';

imageBuiltBeforeAll();

const named = containerNames();

/**
 * The image of an earlier release, built from its commit (the releases table's row) as its Containerfile
 * says, once per machine: kept under a tag naming the commit, so that later runs find it.
 */
async function earlierImage(version: EarlierVersion): Promise<string> {
  const commit = releaseCommit(version);
  const tag = `localhost/animal-store:${version}-${commit.slice(0, 12)}`;
  if (
    await podman('image', 'exists', tag).then(
      () => true,
      () => false,
    )
  )
    return tag;
  const tree = mkdtempSync(join(tmpdir(), `animal-store-${version}-`));
  try {
    execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C "${tree}"`], { cwd: repo });
    await podman('build', '--pull=never', '--format', 'docker', ...caBuildArgs(), '-t', tag, tree);
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
  return tag;
}

describe.runIf(image)('a rolling upgrade of containers (docs/upgrading.md)', () => {
  // The newest release's image (the one deployments run now; the releases table's last row): the older
  // ones' paths are rolled as processes (own-engines/upgrade-from-every-release.test.ts).
  const latest = earlierReleases.at(-1) as EarlierVersion;
  it(`from ${latest}’s image, built from its commit, to this one and back, one container at a time on the host’s PostgreSQL and Redis, under load: nothing lost, no request failed, the limit exact`, {
    timeout: 600_000,
  }, async () => {
    const previous = await earlierImage(latest);
    const store = await freshStore('postgres+redis');
    const env = { ...store, NODE_ENV: 'production', ...noBans } as Record<string, string>;
    let started = 0;
    let newest = '';
    const start = async (release: string, imageName: string): Promise<Instance> => {
      const name = named(`roll-${started++}`);
      newest = name;
      const url = await runImageOf(imageName, name, env);
      return {
        release,
        url,
        stop: async () => {
          await podman('stop', '--time', '15', name);
          return Number(await podman('inspect', name, '--format', '{{.State.ExitCode}}'));
        },
      };
    };
    const serving = [await start(latest, previous), await start(latest, previous)];
    // Keys as the release's operator made them: its keys command inside its container.
    const keyOf = async (perMinute: number, perDay: number) => {
      const made = await podman(
        'exec',
        newest,
        'animal-store-keys',
        'create',
        '--json',
        ...enterprise(perMinute, perDay),
      );
      return /"key"\s*:\s*"(as_[^"]+)"/.exec(made)?.[1] as string;
    };
    const writerKey = await keyOf(1_000_000, 10_000_000);
    const limitedKey = await keyOf(perDay, perDay);
    const { resets } = await rehearse(
      { serving, store, writerKey, limitedKey },
      () => roll(serving, () => start('current', image), 2),
      () => roll(serving, () => start(latest, previous), 2),
    );
    expect(resets).toEqual([]);
    await Promise.all(serving.map((instance) => instance.stop()));
  });
});
