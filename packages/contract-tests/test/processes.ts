// Real processes for the contract tests: Prism (mock or validating proxy) and the built server, each on a
// free loopback port, always stopped.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bundledSpecPath } from '@animal-store/spec/files';
import { spawnUntilReady } from '@animal-store/test-support';

const bin = (name: string) => new URL(`../node_modules/.bin/${name}`, import.meta.url).pathname;
const serverDist = new URL('../node_modules/@animal-store/server/dist/', import.meta.url).pathname;

export type Running = { url: string; output: () => string; stop: () => Promise<unknown> };

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, 'close');
  return port;
}

/** `prism mock` of the bundled contract. Prism ignores `servers`: paths are served at the root. */
export async function prismMock(): Promise<Running> {
  const port = await freePort();
  const p = await spawnUntilReady(
    bin('prism'),
    ['mock', bundledSpecPath, '-h', '127.0.0.1', '-p', String(port)],
    { env: process.env, ready: /Prism is listening/ },
  );
  return { url: `http://127.0.0.1:${port}`, output: p.output, stop: p.stop };
}

/**
 * `prism proxy` in front of `upstream`, validating responses (--errors). Request validation is off so that
 * the server's own 4xx answers reach the client and get checked too.
 */
export async function prismProxy(upstream: string): Promise<Running> {
  const port = await freePort();
  const p = await spawnUntilReady(
    bin('prism'),
    [
      'proxy',
      bundledSpecPath,
      upstream,
      '--errors',
      '--validate-request=false',
      '-h',
      '127.0.0.1',
      '-p',
      String(port),
    ],
    { env: process.env, ready: /Prism is listening/ },
  );
  return { url: `http://127.0.0.1:${port}`, output: p.output, stop: p.stop };
}

export const tempDatabase = () => join(mkdtempSync(join(tmpdir(), 'animal-store-contract-')), 'store.db');

/** The built server with its own database; `keys` runs the key command on the same database. */
export async function server(
  databasePath = tempDatabase(),
  env: Record<string, string> = {},
): Promise<Running> {
  const p = await spawnUntilReady(process.execPath, [join(serverDist, 'main.js')], {
    env: { PATH: process.env.PATH, PORT: '0', DATABASE_URL: databasePath, NODE_ENV: 'production', ...env },
    ready: /"msg":"listening"/,
  });
  const url = /"url":"(http:[^"]+)"/.exec(p.output())?.[1] as string;
  return { url, output: p.output, stop: p.stop };
}

export async function createKey(databasePath: string, ...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(serverDist, 'cli/keys.js'), 'create', '--json', ...args],
    {
      env: { PATH: process.env.PATH, DATABASE_URL: databasePath },
    },
  );
  return (JSON.parse(stdout) as { key: string }).key;
}
