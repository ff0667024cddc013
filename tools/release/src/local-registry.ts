// `pnpm --filter @animal-store/release-tools local-registry [--port <n>] [--dir <folder>]`: a local npm
// registry (Verdaccio) for a release rehearsal by hand, the one `pnpm test:release` publishes to. It serves
// the @animal-store scope itself (any user may publish; a throwaway user is made) and everything else from
// npmjs as usual. It prints the .npmrc lines that send the scope there; stop it with Ctrl-C (its storage
// is deleted unless --dir named one). docs/releasing.md has the rehearsal.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from '@animal-store/test-support';

export type LocalRegistry = {
  /** The registry's address, ending in a slash. */
  url: string;
  /** The throwaway user's token (it may publish the scope). */
  token: string;
  /** .npmrc lines that send the @animal-store scope to the registry, authenticated. */
  npmrc: string;
  /** The folder of its configuration and storage. */
  dir: string;
  /** Stops the registry, and deletes its storage unless the caller named the folder. */
  stop(): void;
};

const config = (dir: string) => `storage: ${join(dir, 'storage')}
auth:
  htpasswd:
    file: ${join(dir, 'htpasswd')}
uplinks:
  npmjs:
    url: https://registry.npmjs.org/
packages:
  '@animal-store/*':
    access: $all
    publish: $authenticated
  '**':
    access: $all
    proxy: npmjs
log: { type: stdout, format: pretty, level: warn }
`;

async function waitUntilUp(url: string, server: ChildProcess): Promise<void> {
  for (let i = 0; i < 150; i++) {
    if (server.exitCode !== null) throw new Error(`Verdaccio exited (${server.exitCode}) before it answered`);
    if ((await fetch(`${url}-/ping`).catch(() => undefined))?.ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Verdaccio did not answer at ${url} within 30 s`);
}

/** Starts Verdaccio on 127.0.0.1 (`port`, else a free one), storing under `dir` (else a temporary folder). */
export async function startLocalRegistry(
  options: { port?: number; dir?: string } = {},
): Promise<LocalRegistry> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'animal-store-registry-'));
  mkdirSync(dir, { recursive: true }); // a --dir that does not exist yet is made
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}/`;
  writeFileSync(join(dir, 'verdaccio.yaml'), config(dir));
  const bin = join(dirname(fileURLToPath(import.meta.resolve('verdaccio/package.json'))), 'bin/verdaccio');
  const server = spawn(
    process.execPath,
    [bin, '--config', join(dir, 'verdaccio.yaml'), '--listen', `127.0.0.1:${port}`],
    { stdio: 'ignore' },
  );
  const stop = () => {
    server.kill();
    if (!options.dir) rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilUp(url, server);
    const user = await fetch(`${url}-/user/org.couchdb.user:release-rehearsal`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'release-rehearsal', password: 'a-throwaway-password' }),
    });
    const { token } = (await user.json()) as { token: string };
    const npmrc = `@animal-store:registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`;
    return { url, token, npmrc, dir, stop };
  } catch (error) {
    stop();
    throw error;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const usage =
    'Usage: pnpm --filter @animal-store/release-tools local-registry [--port <n>] [--dir <folder>]\n';
  let args: { port?: string; dir?: string; help?: boolean };
  try {
    args = parseArgs({
      options: { port: { type: 'string' }, dir: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }).values;
  } catch (error) {
    process.stderr.write(`local-registry: ${(error as Error).message}\n${usage}`);
    process.exit(2);
  }
  if (args.help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  const registry = await startLocalRegistry({
    ...(args.port && { port: Number(args.port) }),
    ...(args.dir && { dir: args.dir }),
  });
  process.stdout.write(
    `A local registry runs at ${registry.url} (Ctrl-C stops it).\n` +
      `Its storage: ${registry.dir}${args.dir ? '' : ' (deleted when it stops)'}\n` +
      `Add these lines to the repository's .npmrc (and remove them after) to publish there:\n\n${registry.npmrc}\n`,
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.on(signal, () => {
      registry.stop();
      process.exit(0);
    });
}
