// The global set-up of the container project (vitest.config.ts): the name of this checkout's image for the
// project's files (support/image.ts: image), its build, and its removal after them, with the untagged build
// stage every build leaves (823 MB). vitest runs every project's global set-up at the start of the run, so
// the build starts then, under the other projects' suites: a process of its own at the lowest CPU priority
// (nice 19), which takes the cores only while their suites wait, so that it never loads their timing (a
// minute of both cores, at full priority, made a Redis fallback admit a key twice). It was built by the first
// container file to begin, after every other suite: 165 s of a clean clone's run, waited for at the end. The
// official base image is stood in for locally under its own name (no registry is reachable here:
// test-support's containers.ts). No podman: the name is empty and the suites that run the image skip.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  onPath,
  podman,
  spawnTied,
  standInNodeImage,
  standInServiceImages,
  toolFor,
} from '@animal-store/test-support';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** This checkout's image, as the container project's set-up names it; '' without podman. */
    image: string;
  }
}

export const repo = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * What this checkout's build reports, as docs/container.md has the host pass it in (between releases
 * `<release>+<commit>`), and its commit.
 */
export async function checkout(): Promise<{ version: string; revision: string }> {
  const { buildVersion } = (await import(`${repo}apps/server/scripts/build-info.mjs`)) as {
    buildVersion: (dir?: string, given?: string) => string;
  };
  const revision = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
  return { version: buildVersion(undefined, ''), revision };
}

export default function setup(project: TestProject) {
  if (!toolFor('the container image', 'podman')) {
    project.provide('image', '');
    return;
  }
  const image = `localhost/animal-store:test-${process.pid}`;
  project.provide('image', image);
  const marks = buildMarks(image);
  mkdirSync(marks.dir, { recursive: true });
  const build = spawnTied(
    'nice',
    [
      '-n',
      '19',
      process.execPath,
      '--import',
      'tsx',
      fileURLToPath(new URL('build-image.ts', import.meta.url)),
      image,
    ],
    { cwd: repo, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  build.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  // The files wait for one of the marks: built, or failed with what the build said.
  build.on('exit', (code, signal) => {
    if (code === 0) writeFileSync(marks.built, '');
    else writeFileSync(marks.failed, `the build ended (${signal ?? code}):\n${stderr}`);
  });
  return async () => {
    build.removeAllListeners('exit'); // its marks go with their folder, now
    if (build.exitCode === null && build.signalCode === null) build.kill('SIGKILL');
    rmSync(marks.dir, { recursive: true, force: true });
    await podman('rmi', '--force', image).catch(() => {});
    await podman('image', 'prune', '--force').catch(() => {});
  };
}

/** Where the set-up tells the files of one run that the image `tag` is built, or failed to build. */
export const buildMarks = (tag: string) => {
  const dir = join(tmpdir(), `animal-store-image-${tag.replace(/\W/g, '_')}`);
  return { dir, built: join(dir, 'built'), failed: join(dir, 'failed') };
};

/** The registry's CA, where this machine names one (docs/container.md: behind a TLS-intercepting proxy). */
export function caBuildArgs(): string[] {
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  return ca
    ? ['-v', `${ca}:/tmp/extra-ca.pem:ro`, '--build-arg', 'NODE_EXTRA_CA_CERTS=/tmp/extra-ca.pem']
    : [];
}

/** Builds this checkout's image as `tag`, as docs/container.md has the host build it. */
export async function buildImage(tag: string): Promise<void> {
  const containerfile = readFileSync(`${repo}Containerfile`, 'utf8');
  await standInNodeImage(/^ARG NODE_IMAGE=(\S+)$/m.exec(containerfile)?.[1] as string);
  const { version, revision } = await checkout();
  await podman(
    'build',
    '--pull=never',
    '--format',
    'docker',
    ...caBuildArgs(),
    '--build-arg',
    `BUILD_VERSION=${version}`,
    '--build-arg',
    `BUILD_REVISION=${revision}`,
    '-t',
    tag,
    repo,
  );
  // The compose files' stand-ins, made here once (a few minutes on a new machine), not by two files at once.
  if (onPath('podman-compose')) await standInServiceImages();
}
