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
