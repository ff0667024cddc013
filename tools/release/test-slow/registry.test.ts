// The real release flow against a real npm registry: Verdaccio on a free loopback port, with a temporary
// storage and a throwaway user, serving only the @animal-store scope (everything else from npmjs as usual).
// A scratch copy of this working tree gets a changeset, `pnpm version-packages`, then `pnpm release`; a
// consumer with plain npm installs the server and the client from the registry and runs them.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createKey, listeningUrl, type ServerProcess, spawnUntilReady } from '@animal-store/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRegistry, startLocalRegistry } from '../src/local-registry.js';
import { scratchCopy, sh } from './scratch.js';

const exec = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'animal-store-release-'));
const scratch = join(work, 'repo');
const consumer = join(work, 'consumer');
const group = ['@animal-store/spec', '@animal-store/server', '@animal-store/client'];
let registry: LocalRegistry | undefined;
let registryUrl: string;
let token: string;
let version: string;
const started: ServerProcess[] = [];

/** The registry's record of a package (all versions), or undefined. */
async function packument(name: string) {
  const res = await fetch(`${registryUrl}${name.replace('/', '%2f')}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return res.ok
    ? ((await res.json()) as { versions: Record<string, { dist: { tarball: string } }> })
    : undefined;
}

beforeAll(async () => {
  // The registry, as `pnpm --filter @animal-store/release-tools local-registry` starts it for a rehearsal.
  registry = await startLocalRegistry();
  registryUrl = registry.url;
  token = registry.token;
  const npmrc = registry.npmrc;

  // The scratch copy, publishing to the registry.
  await scratchCopy(scratch, { prepare: () => writeFileSync(join(scratch, '.npmrc'), npmrc) });
  writeFileSync(
    join(scratch, '.changeset/release-test.md'),
    `---\n"@animal-store/spec": patch\n"@animal-store/server": patch\n"@animal-store/client": patch\n---\n\nA release made by the release test.\n`,
  );
  await sh('pnpm version-packages', scratch);
  version = (JSON.parse(readFileSync(join(scratch, 'spec/package.json'), 'utf8')) as { version: string })
    .version;

  mkdirSync(consumer);
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  writeFileSync(join(consumer, '.npmrc'), `@animal-store:registry=${registryUrl}\n`);
});

afterAll(async () => {
  for (const s of started) await s.stop();
  registry?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('pnpm release against a registry', () => {
  it('with a test failing, publishes nothing', async () => {
    const broken = join(scratch, 'packages/client/src/broken.test.ts');
    writeFileSync(broken, "import { expect, it } from 'vitest';\nit('fails', () => expect(1).toBe(2));\n");
    try {
      await expect(sh('pnpm release', scratch)).rejects.toThrow();
    } finally {
      rmSync(broken);
    }
    for (const name of group) expect(await packument(name)).toBeUndefined();
  });

  it('publishes spec, server and client at one new version, with READMEs and CHANGELOGs and nothing else, and tags the release commit v<version>', async () => {
    await sh(
      'git add -A && git -c user.name=release-test -c user.email=release@test commit -qm release',
      scratch,
    );
    await sh('pnpm release --skip-tests', scratch);
    // One tag for the group, on the release commit; none of Changesets' per-package tags.
    expect((await exec('git', ['tag', '--list'], { cwd: scratch })).stdout.trim()).toBe(`v${version}`);
    expect((await exec('git', ['rev-list', '-n', '1', `v${version}`], { cwd: scratch })).stdout).toBe(
      (await exec('git', ['rev-parse', 'HEAD'], { cwd: scratch })).stdout,
    );
    for (const name of group) {
      const record = await packument(name);
      expect(Object.keys(record?.versions ?? {}), name).toEqual([version]);
      const tarball = join(work, `${name.replace('/', '-')}.tgz`);
      writeFileSync(
        tarball,
        Buffer.from(await (await fetch(record?.versions[version]?.dist.tarball as string)).arrayBuffer()),
      );
      const files = (await exec('tar', ['-tzf', tarball])).stdout.split('\n').filter(Boolean);
      expect(files, name).toEqual(
        expect.arrayContaining(['package/README.md', 'package/CHANGELOG.md', 'package/package.json']),
      );
      expect(
        files.filter((f) => /\.test(-d)?\.[jt]s$|\/test\//.test(f)),
        name,
      ).toEqual([]);
      if (name !== '@animal-store/server')
        expect(
          files.filter((f) => f.endsWith('docs.html')),
          name,
        ).toEqual([]);
    }
    const changelog = readFileSync(join(scratch, 'apps/server/CHANGELOG.md'), 'utf8');
    expect(changelog).toContain(`## ${version}`);
    expect(changelog).toContain('A release made by the release test.');
  });

  it('refuses to publish the same version twice, clearly, and publishes nothing', async () => {
    const error = await sh('pnpm release --skip-tests', scratch).catch((e: { stderr: string }) => e);
    expect((error as { stderr: string }).stderr).toMatch(/already published; nothing was published/);
    for (const name of group) expect(Object.keys((await packument(name))?.versions ?? {})).toEqual([version]);
  });

  it('with --unless-published (release.yml after a merge with nothing pending), says so and exits 0, publishing nothing', async () => {
    const { stdout } = await sh('pnpm release --skip-tests --unless-published', scratch);
    expect(stdout).toMatch(/already published: nothing to release/);
    expect(stdout).not.toMatch(/New tag:/); // what the Changesets action reads as "published"
    for (const name of group) expect(Object.keys((await packument(name))?.versions ?? {})).toEqual([version]);
  });

  it('installs with plain npm in an empty project; npx @animal-store/server runs it; the client talks to it', async () => {
    await sh(
      `npm install --no-audit --no-fund @animal-store/server@${version} @animal-store/client@${version}`,
      consumer,
    );
    const installed = (name: string) =>
      (
        JSON.parse(readFileSync(join(consumer, 'node_modules', name, 'package.json'), 'utf8')) as {
          version: string;
        }
      ).version;
    for (const name of group) expect(installed(name), name).toBe(version);
    const serverDist = join(consumer, 'node_modules/@animal-store/server/dist');
    const env = { DATABASE_URL: join(consumer, 'data/store.db'), NODE_ENV: 'production' };
    const { key } = await createKey(serverDist, env, '--plan', 'free');
    // Through the installed executables, as an operator would.
    const viaBin = await sh(`npx animal-store-keys list --json`, consumer, env);
    expect(JSON.parse(viaBin.stdout)).toHaveLength(1);
    // `npx @animal-store/server` runs the package's own executable (its `server` bin, by npm's rule).
    const spawned = await spawnUntilReady('npx', ['--no-install', '@animal-store/server'], {
      cwd: consumer,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        PORT: '0',
        HOST: '127.0.0.1',
        ...env,
      },
      ready: (output) => listeningUrl(output) !== undefined,
      timeoutMs: 30_000,
    });
    const running = { ...spawned, url: listeningUrl(spawned.output()) as string };
    // On the Node.js running this test (24 under .ci/run), as its readiness line says.
    const readiness = spawned
      .output()
      .split('\n')
      .find((line) => line.includes('"msg":"listening"'));
    expect(JSON.parse(readiness as string)).toMatchObject({ node: process.version });
    started.push(running);
    writeFileSync(
      join(consumer, 'use.mjs'),
      `import { createClient } from '@animal-store/client';
const client = createClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });
const pet = await client.createPet({ name: 'Published', categoryId: 1 });
const pets = await client.listPets({ id: [pet.id] });
process.stdout.write(JSON.stringify({ pet, pets }));
`,
    );
    const { stdout } = await sh('node use.mjs', consumer, { BASE_URL: `${running.url}/v1`, API_KEY: key });
    const { pet, pets } = JSON.parse(stdout) as { pet: { id: number; name: string }; pets: unknown[] };
    expect(pet.name).toBe('Published');
    expect(pets).toEqual([pet]);
  });
});
