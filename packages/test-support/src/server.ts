// The built server and its key command as child processes, for every suite that starts them (server
// process tests, contract tests, release tests). Readiness is the server's documented signal: the first
// JSON log line whose msg is "listening", carrying the url.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { onExit } from 'signal-exit';
import { type Spawned, spawnUntilReady } from './spawn.js';

export type ServerProcess = Spawned & {
  url: string;
  /** The admin API's origin when ADMIN_PORT is set, else undefined. */
  adminUrl?: string | undefined;
};

/**
 * What every process started here has in its environment besides its own variables: PATH, and Node's
 * compile cache (NODE_COMPILE_CACHE, Node 22.1 and later), since the suites start the server and its key
 * command hundreds of times and each start compiles the same modules.
 */
const childEnv = {
  PATH: process.env.PATH ?? '',
  NODE_COMPILE_CACHE: join(tmpdir(), 'animal-store-test-compile-cache'),
};

/** The folders tempDatabase made, removed when the process that made them ends. */
const madeFolders: string[] = [];

/**
 * A fresh path for a throwaway SQLite database in its own temporary folder, removed with the folder when
 * this process ends: at its exit (the bench at the end of its run) or on a signal (vitest stops a test
 * worker with SIGTERM, which runs no exit handler: signal-exit's onExit sees both, then lets the signal
 * end the process). A full run left about 250 of them behind.
 */
export function tempDatabase(prefix = 'animal-store-test-'): string {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  if (madeFolders.length === 0)
    onExit(() => {
      for (const made of madeFolders) rmSync(made, { recursive: true, force: true });
    });
  madeFolders.push(folder);
  return join(folder, 'store.db');
}

/** The server's readiness line in `output` (its url, and adminUrl with the admin API), if printed. */
export function listeningRecord(output: string): { url: string; adminUrl?: string } | undefined {
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const record = JSON.parse(line) as { msg?: string; url?: string; adminUrl?: string };
      if (record.msg === 'listening' && record.url) return { url: record.url, adminUrl: record.adminUrl };
    } catch {
      // not a log record (e.g. the development key banner)
    }
  }
  return undefined;
}

/** The url of the server's readiness line in `output`, if it has been printed. */
export const listeningUrl = (output: string): string | undefined => listeningRecord(output)?.url;

/**
 * Starts `<serverDist>/main.js` on an ephemeral loopback port with only PATH and `env` in its environment,
 * optionally under a wrapper command (e.g. `faketime -f @...`), and waits for its readiness line.
 */
export async function startServerProcess(
  serverDist: string,
  env: Record<string, string>,
  wrapper: string[] = [],
): Promise<ServerProcess> {
  const [program = process.execPath, ...args] = [...wrapper, process.execPath, join(serverDist, 'main.js')];
  const spawned = await spawnUntilReady(program, args, {
    env: { ...childEnv, PORT: '0', HOST: '127.0.0.1', ...env },
    ready: (output) => listeningUrl(output) !== undefined,
  });
  const record = listeningRecord(spawned.output());
  return { ...spawned, url: record?.url as string, adminUrl: record?.adminUrl };
}

/** Runs `<serverDist>/cli/keys.js` with `args` on `env` (DATABASE_URL, ...); stdout and stderr. */
export const keysCommand = (serverDist: string, env: Record<string, string>, ...args: string[]) =>
  promisify(execFile)(process.execPath, [join(serverDist, 'cli/keys.js'), ...args], {
    env: { ...childEnv, ...env },
  });

/** The `keys create` arguments of an enterprise key with its own limits. */
export const enterprise = (perMinute: number, perDay: number): string[] => [
  '--plan',
  'enterprise',
  '--per-minute',
  String(perMinute),
  '--per-day',
  String(perDay),
];

/** A new key made by `keys create --json` (plan and limits in `args`), with everything it printed. */
export async function createKey(serverDist: string, env: Record<string, string>, ...args: string[]) {
  const { stdout } = await keysCommand(serverDist, env, 'create', '--json', ...args);
  return JSON.parse(stdout) as { id: string; key: string; plan: string; perMinute: number; perDay: number };
}
