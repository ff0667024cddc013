// Podman for the container suites, with this machine's settings in one place (containers/containers.conf:
// runc, ulimits of 1024, the host's network), and the stand-in for an official base image that no registry
// here serves (containers/stand-in-node-image.sh).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const here = (path: string) => fileURLToPath(new URL(`../containers/${path}`, import.meta.url));
const run = promisify(execFile);

/** The environment every podman command of the suites runs with. */
export const podmanEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  CONTAINERS_CONF: here('containers.conf'),
});

/** Runs `podman …args`; stdout, trimmed. Throws with podman's stderr when it fails. */
export async function podman(...args: string[]): Promise<string> {
  const { stdout } = await run('podman', args, { env: podmanEnv(), maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

/**
 * Makes `image` (an official `node:<version>-bookworm-slim` name) exist locally: a stand-in built from
 * Debian's packages and the npm registry's Node.js when no image of that name is there yet.
 */
export async function standInNodeImage(image: string): Promise<void> {
  const version = /node:(\d+\.\d+\.\d+)-bookworm-slim$/.exec(image)?.[1];
  if (!version) throw new Error(`not an official node:<version>-bookworm-slim image: ${image}`);
  await run('sh', [here('stand-in-node-image.sh'), image, version], {
    env: podmanEnv(),
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** The local Debian root the service stand-ins are built on (containers/stand-in/debian-base.sh). */
const standInBase = 'localhost/animal-store-stand-in/debian:bookworm';

/**
 * The official images compose.yaml names for its services, each with the stand-in that takes its name
 * here (containers/stand-in/<name>.Containerfile: Debian's package of the same version behind the
 * official image's interface, as far as compose.yaml uses it).
 */
export const serviceImages = {
  postgres: 'docker.io/library/postgres:15-bookworm',
  redis: 'docker.io/library/redis:7.0-bookworm',
  nginx: 'docker.io/library/nginx:1.22',
} as const;

/**
 * Makes every image of serviceImages exist locally: a stand-in built from Debian's packages when no image
 * of that name is there yet (once per machine: a few minutes the first time).
 */
export async function standInServiceImages(): Promise<void> {
  const options = { env: podmanEnv(), maxBuffer: 64 * 1024 * 1024 };
  await run('sh', [here('stand-in/debian-base.sh'), standInBase], options);
  for (const [name, image] of Object.entries(serviceImages)) {
    if (
      await podman('image', 'exists', image).then(
        () => true,
        () => false,
      )
    )
      continue;
    await podman(
      'build',
      '--pull=never',
      '--format',
      'docker',
      '--build-arg',
      `BASE=${standInBase}`,
      '-f',
      here(`stand-in/${name}.Containerfile`),
      '-t',
      image,
      here('stand-in'),
    );
  }
}
