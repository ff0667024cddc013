// Test harness: the real app on an ephemeral loopback port with a throwaway database, or the built server
// as a child process (for clocks, restarts and signals). Nothing of our own is mocked.
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type Spawned, spawnUntilReady } from '@animal-store/test-support';
import { pino } from 'pino';
import { expect } from 'vitest';
import { createApp } from '../src/app.js';
import type { ContractViolation } from '../src/http/validation.js';
import type { LimiterOptions } from '../src/limits/limiter.js';
import { type Db, openDatabase } from '../src/store/database.js';
import { createKeyStore } from '../src/store/keys.js';

export const defaultLimits: LimiterOptions = { ban: { threshold: 10, seconds: 900 }, anonymousPerMinute: 30 };

export type TestServer = Awaited<ReturnType<typeof startServer>>;

export async function startServer(
  options: { databasePath?: string; limits?: Partial<LimiterOptions>; trustProxy?: string } = {},
) {
  const db: Db = openDatabase(options.databasePath ?? ':memory:');
  const logs: string[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({ write: (chunk, _enc, done) => done(void logs.push(String(chunk))) }),
  );
  const violations: ContractViolation[] = [];
  const app = createApp({
    db,
    logger,
    limits: { ...defaultLimits, ...options.limits },
    trustProxy: options.trustProxy,
    onContractViolation: (violation) => violations.push(violation),
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const keys = createKeyStore(db);
  return {
    url,
    db,
    keys,
    logs,
    violations,
    /** A fresh key; enterprise with the given quota, or free. */
    key: (quota?: { perMinute: number; perDay: number }) =>
      keys.create(quota ? { plan: 'enterprise', quota } : { plan: 'free' }).key,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
      db.close();
      // Every response the suite provoked must have matched the contract.
      expect(violations).toEqual([]);
    },
  };
}

export const tempDatabase = () => join(mkdtempSync(join(tmpdir(), 'animal-store-test-')), 'store.db');

export const json = 'application/json';

export function call(url: string, key: string | undefined, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  if (key !== undefined) headers.set('authorization', `Bearer ${key}`);
  if (init.body !== undefined && !headers.has('content-type')) headers.set('content-type', json);
  return fetch(url, { ...init, headers });
}

export type ServerProcess = Spawned & { url: string };

const mainJs = new URL('../dist/main.js', import.meta.url).pathname;

/** Starts the built server (`pnpm build`) as a child process on an ephemeral port, after `command` if any. */
export async function startProcess(
  env: Record<string, string>,
  command: string[] = [],
): Promise<ServerProcess> {
  const [program = process.execPath, ...args] = [...command, process.execPath, mainJs];
  const spawned = await spawnUntilReady(program, args, {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', ...env },
    ready: /"msg":"listening"/,
    timeoutMs: 20_000,
  });
  return { ...spawned, url: /"url":"(http:[^"]+)"/.exec(spawned.output())?.[1] as string };
}
