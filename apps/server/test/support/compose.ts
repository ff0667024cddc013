// compose.yaml as docs/compose.md has an operator run it, with Debian's podman-compose: this checkout's
// image (support/image.ts) and stand-ins for the official PostgreSQL, Redis and nginx images
// (test-support's containers.ts), each run a project of its own in a folder holding the files compose.yaml
// reads and the env file the docs say how to make.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import {
  enterprise,
  freePort,
  podman,
  podmanEnv,
  standInServiceImages,
  toolFor,
} from '@animal-store/test-support';
import { afterAll, vi } from 'vitest';
import { image, petsCall, repo } from './image.js';
import { heldWithin } from './waits.js';

const run = promisify(execFile);
export const podmanCompose = toolFor('the compose deployment', 'podman-compose');
const projects: { down(): Promise<void> }[] = [];
afterAll(async () => {
  for (const project of projects) await project.down();
});

/** A project of compose.yaml (and `more` files on top), up and ready behind its proxy. */
export async function composeUp(name: string, more: string[] = []) {
  await standInServiceImages();
  const project = `animal-store-test-${process.pid}-${name}`;
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-compose-'));
  const files = ['compose.yaml', ...more];
  for (const file of [...files, ...readdirSync(`${repo}deploy/compose`).map((f) => `deploy/compose/${f}`)]) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(`${repo}${file}`, join(dir, file));
  }
  const password = randomBytes(24).toString('hex');
  const adminToken = randomBytes(24).toString('hex');
  writeFileSync(
    join(dir, 'compose.env'),
    `POSTGRES_PASSWORD=${password}\nPGPASSWORD=${password}\nADMIN_TOKENS=${adminToken}\n`,
  );
  const [port, adminPort] = [await freePort(), await freePort()];
  const env = {
    ...podmanEnv(),
    ANIMAL_STORE_IMAGE: image,
    PUBLISH_PORT: String(port),
    ADMIN_PUBLISH_PORT: String(adminPort),
  };
  const compose = async (...args: string[]) =>
    (
      await run(podmanCompose as string, ['-p', project, ...files.flatMap((f) => ['-f', f]), ...args], {
        cwd: dir,
        env,
        maxBuffer: 64 * 1024 * 1024,
      })
    ).stdout;
  const handle = {
    url: `http://127.0.0.1:${port}`,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    adminToken,
    password,
    compose,
    /** The container of `service`, as podman-compose 1.0.3 names it. */
    container: (service: string) => `${project}_${service}_1`,
    /**
     * A key made by the keys command inside a service, as docs/compose.md shows it; tried again while the
     * instance still starts (it starts again until PostgreSQL answers).
     */
    async keyInService(...args: string[]): Promise<string> {
      const made = async () => {
        const out = await compose('exec', 'instance-a', 'animal-store-keys', 'create', '--json', ...args);
        // Its JSON, among the lines podman-compose and the command's log add.
        const key = /"key"\s*:\s*"(as_[^"]+)"/.exec(out)?.[1];
        if (!key) throw new Error(`no key made:\n${out}`);
        return key;
      };
      return vi.waitFor(made, { timeout: 120_000, interval: 1_000 });
    },
    /**
     * A key of no practical limit, once both instances have answered it ten times in a row: their pools'
     * first connections to the PostgreSQL container (password logins) can miss the 3 s connect deadline on
     * a loaded machine, and a 503 then is the service working, not what a test here measures.
     */
    async warmKey(): Promise<string> {
      const key = await handle.keyInService(...enterprise(1_000_000, 10_000_000));
      for (let inRow = 0, tries = 0; inRow < 10; tries++) {
        if (tries === 200) throw new Error('never answered ten times in a row');
        inRow = (await petsCall(handle.url, key)).status === 200 ? inRow + 1 : 0;
      }
      return key;
    },
    /**
     * Runs `steps`; a failure carries the services' logs but the 2xx lines of the proxy and the instances (the
     * last 6,000 characters), its own message last, where a report cut from the top still shows it.
     */
    async shown(steps: () => Promise<void>) {
      try {
        await steps();
      } catch (error) {
        const logs = (await compose('logs').catch((e: Error) => e.message))
          .split('\n')
          .filter((line) => !/" 2\d\d \d+ "|"statusCode":2\d\d\}/.test(line))
          .join('\n');
        throw new Error(
          `--- podman-compose logs, the 2xx lines left out:\n${logs.slice(-6_000)}\n--- ${(error as Error).message}`,
        );
      }
    },
    /** What the project left behind: containers, volumes, networks (by the project's label). */
    leftBehind: () =>
      Promise.all(
        [
          ['ps', '-a'],
          ['volume', 'ls'],
          ['network', 'ls'],
        ].map((command) =>
          podman(...command, '--filter', `label=io.podman.compose.project=${project}`, '--format', '{{.ID}}'),
        ),
      ),
    /** podman-compose 1.0.3's `down` leaves the project's network: removed as docs/compose.md says. */
    async down() {
      await compose('down', '-v').catch(() => {});
      await podman('network', 'rm', '--force', `${project}_default`).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
  projects.push(handle);
  await handle.shown(async () => {
    await compose('up', '-d');
    const ready = () =>
      fetch(`${handle.url}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
    if (!(await heldWithin(ready, { timeout: 120_000, interval: 500 }))) throw new Error('never ready');
  });
  return handle;
}
