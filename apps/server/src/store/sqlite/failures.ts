// SQLite's failures, turned into the store's errors here, next to the engine that raises them, and the
// wait for another process's write lock.
//
// The wait happens on the event loop, not inside a call. better-sqlite3 is synchronous: with a long busy
// timeout SQLite sleeps inside the call while another process holds the write lock, and the whole process
// stops with it (liveness included). The service's connection has a
// short busy timeout instead, and a call refused as locked is retried from a timer until `lockWaitMs` has
// passed; then it fails as busy (a 503 with Retry-After). Written by hand:
// docs/decisions.md#sqlite-lock-waits.
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { StoreUnavailableError, StoreUnwritableError } from '../unavailable.js';

/** How long a call waits for another process's write lock, in all, before it fails (documented: 5 s). */
export const lockWaitMs = 5_000;
/** The longest one attempt may block the event loop inside SQLite's own busy handler. */
export const busyTimeoutMs = 10;

const codeOf = (error: unknown) => String((error as { code?: unknown } | null)?.code ?? '');
const locked = (error: unknown) => /^SQLITE_(BUSY|LOCKED)/.test(codeOf(error));

/**
 * The first of the database's folder and files (the database, its -wal and -shm) that this process
 * cannot write, as a phrase for an operator, or undefined. SQLite needs all of them writable: an
 * unwritable -shm it maps into memory can end the process with SIGBUS, so this is checked before opening.
 */
export function unwritablePart(path: string): string | undefined {
  const writable = (file: string) => {
    try {
      accessSync(file, constants.W_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (!writable(dirname(path))) return `its folder ${dirname(path)} is not writable by this process`;
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file) && !writable(file)) return `${file} is not writable by this process`;
  }
  return undefined;
}

/** The store's error for an SQLite failure of the database at `path`, or the error itself (a bug). */
export function translate(error: unknown, path: string): unknown {
  const code = codeOf(error);
  const message = (error as Error).message;
  if (code.startsWith('SQLITE_FULL')) {
    return new StoreUnwritableError('disk_full', `the store's disk is full: ${message}`);
  }
  if (/^SQLITE_(READONLY|IOERR|CANTOPEN)/.test(code)) {
    const part = path === ':memory:' ? undefined : unwritablePart(path);
    return new StoreUnwritableError(
      'read_only',
      `the store's files cannot be written: ${message}${part ? ` (${part})` : ''}`,
    );
  }
  if (locked(error)) return new StoreUnavailableError(`the store is busy: ${message}`);
  return error;
}

/**
 * Runs `call`, retrying it from a timer while the database is locked, up to `waitMs` in all; a failure
 * leaves as the store's error (see translate).
 */
export async function sqliteCall<T>(
  call: () => T | Promise<T>,
  path: string,
  waitMs = lockWaitMs,
): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
    try {
      return await call();
    } catch (error) {
      if (!locked(error) || Date.now() + delay > deadline) throw translate(error, path);
    }
    await sleep(delay);
  }
}

/** `target` with each of its methods run through sqliteCall (a plain object or a class instance). */
export function guarded<T extends object>(target: T, path: string): T {
  return new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => sqliteCall(() => value.apply(object, args), path);
    },
  });
}
