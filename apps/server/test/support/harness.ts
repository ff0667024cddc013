// Test harness: the real app on an ephemeral loopback port with a throwaway database, or the built server
// as a child process (for clocks, restarts and signals). Nothing of our own is mocked.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { dirname } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import {
  createKey,
  enterprise,
  keysCommand,
  type ServerProcess,
  startServerProcess,
} from '@animal-store/test-support';

export { call, launchChromium, type ServerProcess, tempDatabase } from '@animal-store/test-support';

import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { composeService } from '../../src/compose.js';

import type { ConnectionLimits, TrustProxy } from '../../src/config.js';
import { loadConfig } from '../../src/config.js';
import type { OpenApiDocument } from '../../src/contract.js';
import type { ContractViolation } from '../../src/http/validation.js';
import type { LimiterOptions } from '../../src/limits/policy.js';
import { type Plan, quotaFor } from '../../src/plans.js';
import { createServer, defaultConnectionLimits } from '../../src/server.js';
import { Stops } from '../../src/stops.js';
import { parseKeyToken } from '../../src/store/key-tokens.js';
import { openBackend } from '../../src/store/open.js';
import { freshStore, rawSql, type TestStore } from './backends.js';

export { backend, freshStore, type TestStore } from './backends.js';

export type TestServer = Awaited<ReturnType<typeof startServer>>;

/** A test server's listener closed at once, its connections cut (no drain: the test is over). */
async function closeNow(server: Server): Promise<void> {
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
}

/** A logger at info whose lines are kept in `logs`, as a test reads what the service logged. */
export function capturedLogger() {
  const logs: string[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({ write: (chunk, _enc, done) => done(void logs.push(String(chunk))) }),
  );
  return { logs, logger };
}

/**
 * The app on an ephemeral loopback port over a store of the project's backend: `store` (from freshStore)
 * to share one between servers or with processes, a new one otherwise.
 */
export async function startServer(
  options: {
    store?: TestStore;
    limits?: Partial<LimiterOptions>;
    connections?: Partial<ConnectionLimits>;
    trustProxy?: TrustProxy;
    contract?: OpenApiDocument;
    corsOrigins?: string[];
    metricsToken?: string;
    /** More configuration, as environment variables (e.g. DATABASE_STATEMENT_TIMEOUT_MS). */
    env?: Record<string, string>;
    /** Also the admin API on a listener of its own, with these tokens (see adminUrl). */
    adminTokens?: string[];
    /** The admin API's limit per token and minute (default: config.ts's ADMIN_RATE_LIMIT_PER_MINUTE). */
    adminPerMinute?: number;
  } = {},
) {
  const location = options.store ?? (await freshStore());
  // The admin API as the environment would ask for it (its defaults are config.ts's, stated there only).
  const admin = options.adminTokens && {
    ADMIN_PORT: '0',
    ADMIN_TOKENS: options.adminTokens.join(','),
    ...(options.adminPerMinute && { ADMIN_RATE_LIMIT_PER_MINUTE: String(options.adminPerMinute) }),
  };
  const config = loadConfig({ ...location, NODE_ENV: 'test', ...admin, ...options.env });
  const { logs, logger } = capturedLogger();
  // Each part's stop registered as it is made, run last-made first (src/stops.ts), as run.ts does.
  const stops = new Stops();
  const backend = await openBackend(config.database, config.redis, logger);
  const { store } = backend;
  const raw = await rawSql(location);
  stops.onStop(() => raw.close());
  const violations: ContractViolation[] = [];
  const service = await composeService(
    {
      ...config,
      limits: { ...config.limits, ...options.limits },
      trustProxy: options.trustProxy,
      corsOrigins: options.corsOrigins ?? [],
      metricsToken: options.metricsToken,
    },
    backend,
    logger,
    {
      onContractViolation: (violation) => violations.push(violation),
      ...(options.contract && { contract: options.contract }),
    },
  );
  stops.onStop(service.stop);
  const { meter } = service;
  const server = createServer(service.app, { ...defaultConnectionLimits, ...options.connections }, logger);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  stops.onStop(() => closeNow(server));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const adminServer = service.adminApp && createServer(service.adminApp, defaultConnectionLimits, logger);
  adminServer?.listen(0, '127.0.0.1');
  if (adminServer) {
    await once(adminServer, 'listening');
    stops.onStop(() => closeNow(adminServer));
  }
  const { keys } = store;
  return {
    url,
    /** The admin API's origin (with adminTokens), e.g. `http://127.0.0.1:40387`. */
    adminUrl: adminServer ? `http://127.0.0.1:${(adminServer.address() as AddressInfo).port}` : '',
    meter,
    /** The limiter, for what an operator does behind the API (start a key's windows over, its ban kept). */
    limiter: service.limiter,
    /** The public app and the admin app (whose middleware stacks a test can read). */
    app: service.app,
    adminApp: service.adminApp,
    server,
    store,
    location,
    keys,
    /** Rows of a statement run on the store behind the API's back (`?` placeholders, either engine). */
    async sql<R = Record<string, unknown>>(text: string, ...params: unknown[]): Promise<R[]> {
      return raw.query(text, params) as Promise<R[]>;
    },
    async petCount(): Promise<number> {
      const [row] = await raw.query('SELECT count(*) AS n FROM pets', []);
      return Number((row as { n: number | string }).n);
    },
    logs,
    violations,
    /** A fresh key: enterprise with the given quota, free without one. */
    key: async (quota?: { perMinute: number; perDay: number }) =>
      (await keys.create(quota ? { plan: 'enterprise', quota } : { plan: 'free', quota: quotaFor('free') }))
        .key,
    /** A fresh key of one of the fixed plans. */
    keyOf: async (plan: Exclude<Plan, 'enterprise'>) =>
      (await keys.create({ plan, quota: quotaFor(plan) })).key,
    /** Every response the suite provoked must have matched the contract (asserted, then forgotten). */
    expectNoContractViolations() {
      expect(violations).toEqual([]);
    },
    close: () => stops.stop(),
  };
}

/** The lines a server process logged with message `msg`. */
export const logLines = (server: ServerProcess, msg: string): string[] =>
  server
    .output()
    .split('\n')
    .filter((line) => line.includes(`"msg":"${msg}"`));

export const json = 'application/json';

/** A key's id and secret, read by the server's own parser (a secret may itself contain `_`). */
export function tokenParts(token: string): { id: string; secret: string } {
  const parts = parseKeyToken(token);
  if (!parts) throw new Error('not an API key');
  return parts;
}

/** The rate-limit headers every /v1 response carries (lower-case, as fetch reports them). */
export const rateLimitHeaders = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit',
  'ratelimit-policy',
];

/** The built server (`pnpm build`): main.js and cli/keys.js. */
export const serverDist = fileURLToPath(new URL('../../dist/', import.meta.url));

/** The built key command (`pnpm keys`) on the SQLite database at `databasePath`: its stdout and stderr. */
export const keysOn = (databasePath: string, ...args: string[]) =>
  keysCommand(serverDist, { DATABASE_URL: databasePath }, ...args);

/** Starts the built server as a child process on an ephemeral port, under `wrapper` if any. */
export const startProcess = (env: Record<string, string>, wrapper: string[] = []): Promise<ServerProcess> =>
  startServerProcess(serverDist, env, wrapper);

/** The environment of a fleet's process on `store` (see fleetForFile), with `env` added. */
export const fleetEnv = (store: TestStore, env: Record<string, string> = {}): Record<string, string> => ({
  ...store,
  NODE_ENV: 'production',
  LOG_LEVEL: 'warn',
  REDIS_COMMAND_TIMEOUT_MS: '2000',
  ...env,
});

/**
 * `n` built servers on one fresh store for a whole file (started before its tests, stopped after them),
 * with `env` added to production, warn logs, and Redis given the 2 s a loaded machine may need (past the
 * default 500 ms an instance runs on its own share by design, which is not what these suites measure).
 * `servers` is filled in place: a test may add one of its own, and take it off once stopped.
 */
export function fleetForFile(n: number, env: Record<string, string> = {}) {
  const fleet = { store: {} as TestStore, servers: [] as ServerProcess[] };
  beforeAll(async () => {
    fleet.store = await freshStore();
    const all = fleetEnv(fleet.store, env);
    fleet.servers.push(...(await Promise.all(Array.from({ length: n }, () => startProcess(all)))));
  });
  afterAll(async () => {
    await Promise.all(fleet.servers.map((s) => s.stop()));
  });
  return fleet;
}

/** An enterprise key of `perMinute` and `perDay`, made on `store` by the built keys CLI. */
export const keyOn = async (store: TestStore, perMinute: number, perDay = 100_000) =>
  (await createKey(serverDist, { ...store }, ...enterprise(perMinute, perDay))).key;

/** What a test undoes after it, last first (registered as each part is made): run after each test. */
export function cleanupsAfterEach(): (() => Promise<unknown> | unknown)[] {
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return cleanups;
}

/** startProcess for a test file whose processes are all stopped after each test (one already gone is skipped). */
export function processesStoppedAfterEach(): typeof startProcess {
  const running: ServerProcess[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((s) => s.stop()));
  });
  return async (...args) => {
    const server = await startProcess(...args);
    running.push(server);
    return server;
  };
}

/**
 * Sends `request` as raw bytes (for what fetch refuses to send) and collects the answer until the server
 * closes the connection or `waitMs` passes; `closed` says which.
 */
export async function rawRequest(
  url: string,
  request: string | Buffer,
  waitMs = 2_000,
): Promise<{ text: string; closed: boolean; elapsedMs: number }> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  const started = Date.now();
  let text = '';
  socket.on('data', (chunk) => {
    text += chunk;
  });
  socket.on('error', () => {}); // a reset is an answer too: `closed`
  socket.write(request);
  const closed = await Promise.race([
    once(socket, 'close').then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), waitMs)),
  ]);
  socket.destroy();
  return { text, closed, elapsedMs: Date.now() - started };
}

/** The status, headers (lower-cased) and JSON body of the first response in a raw answer. */
export function parseRaw(text: string) {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: body ? JSON.parse(body) : undefined };
}

/** A 503 `service_unavailable` in the Error shape, with the Retry-After the contract promises. */
export async function expectServiceUnavailable(res: Response) {
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe('5');
  expect(await res.json()).toEqual({ code: 'service_unavailable', message: expect.any(String), status: 503 });
}

/**
 * One server for a whole test file, with a key far from its limits: started before the file's tests (then
 * `prepare` runs, e.g. to seed pets), and after them checked for contract violations and stopped. `options`
 * as startServer takes them (the admin suites start theirs with admin tokens).
 */
export function withServer(
  prepare: (server: TestServer, key: string) => void | Promise<void>,
  options: Parameters<typeof startServer>[0] = {},
): void {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startServer(options);
    await prepare(server, await server.key({ perMinute: 10_000, perDay: 100_000 }));
  });
  afterAll(async () => {
    if (!server) return;
    server.expectNoContractViolations();
    await server.close();
  });
}

/**
 * Another process holding SQLite's write lock on `path` for `ms` (BEGIN IMMEDIATE, then COMMIT): resolves
 * once the lock is held. Kill the child to end it early.
 */
export async function holdWriteLock(path: string, ms: number): Promise<ChildProcess> {
  const holder = spawn(
    process.execPath,
    [
      '-e',
      `const db = new (require('better-sqlite3'))(${JSON.stringify(path)}); db.exec('BEGIN IMMEDIATE'); console.log('locked'); setTimeout(() => { db.exec('COMMIT'); db.close(); }, ${ms});`,
    ],
    { cwd: dirname(serverDist) }, // apps/server, where better-sqlite3 resolves
  );
  await once(holder.stdout, 'data');
  return holder;
}
