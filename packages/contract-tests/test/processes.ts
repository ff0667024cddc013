import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { bundledAdminSpecPath, bundledSpecPath } from '@animal-store/spec/files';
import {
  freePort,
  createKey as makeKey,
  spawnUntilReady,
  startServerProcess,
  tempDatabase as tempDatabaseIn,
} from '@animal-store/test-support';

const require = createRequire(import.meta.url);
/** Prism's command-line entry, found through package resolution. */
const prism = join(dirname(require.resolve('@stoplight/prism-cli/package.json')), 'dist/index.js');
/** The built server package this workspace depends on (its dist folder). */
const serverDist = dirname(require.resolve('@animal-store/server'));

export type Running = {
  url: string;
  /** The admin API's origin, for a server started with ADMIN_PORT. */
  adminUrl?: string | undefined;
  output: () => string;
  stop: () => Promise<unknown>;
};

/** The two bundled contracts Prism can serve or check. */
export const contracts = { public: bundledSpecPath, admin: bundledAdminSpecPath };

/** `prism mock` of a bundled contract. Prism ignores `servers`: paths are served at the root. */
export async function prismMock(contract = contracts.public): Promise<Running> {
  const port = await freePort();
  const p = await spawnUntilReady(
    process.execPath,
    [prism, 'mock', contract, '-h', '127.0.0.1', '-p', String(port)],
    { env: process.env, ready: /Prism is listening/ },
  );
  return { url: `http://127.0.0.1:${port}`, output: p.output, stop: p.stop };
}

/**
 * `prism proxy` in front of `upstream`, validating responses (--errors). Request validation is off so that
 * the server's own 4xx answers reach the client and get checked too.
 */
export async function prismProxy(upstream: string, contract = contracts.public): Promise<Running> {
  const port = await freePort();
  const p = await spawnUntilReady(
    process.execPath,
    [
      prism,
      'proxy',
      contract,
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

export const tempDatabase = () => tempDatabaseIn('animal-store-contract-');

/** The built server with its own database, in production mode. */
export const server = (databasePath = tempDatabase(), env: Record<string, string> = {}): Promise<Running> =>
  startServerProcess(serverDist, { DATABASE_URL: databasePath, NODE_ENV: 'production', ...env });

/** A new key on the database, made by the key command. */
export const createKey = async (databasePath: string, ...args: string[]): Promise<string> =>
  (await makeKey(serverDist, { DATABASE_URL: databasePath }, ...args)).key;
