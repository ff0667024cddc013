// Opens the SQLite database, refuses a damaged one, and brings its schema up to date (migrations.ts: each
// runs once, in order, inside a transaction, and PRAGMA user_version records how many have run).
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { keysWithoutSearchText, searchText, type UnsearchableKey } from '../key-query.js';
import { StoreOpenError } from '../open-error.js';
import { unwritablePart } from './failures.js';
import { migrations } from './migrations.js';

export type Db = Database.Database;

/** What went wrong, in the operator's terms, for the errors SQLite and the file system report. */
function explain(path: string, error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'SQLITE_NOTADB':
      return 'is not an SQLite database; point DATABASE_URL at an Animal Store database, or at a path where a new one can be created';
    case 'SQLITE_CORRUPT':
      return 'is damaged (SQLite reports corruption); restore it from a backup (docs/running.md)';
    case 'SQLITE_BUSY':
    case 'SQLITE_BUSY_SNAPSHOT':
      return 'is locked by another process; stop that process, or point DATABASE_URL elsewhere';
    case 'SQLITE_READONLY':
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return 'cannot be written; give the service write access to it and its folder, or point DATABASE_URL elsewhere';
    case 'ENOTDIR':
    case 'EEXIST':
      return `cannot be created: part of its folder path (${dirname(path)}) is a file; point DATABASE_URL elsewhere`;
    default:
      return 'cannot be opened; check that its folder exists and is writable, or point DATABASE_URL elsewhere';
  }
}

/**
 * Creates a folder and its missing parents one at a time. Node's recursive mkdir never returns for a path
 * under /proc (it spins at full CPU); one level at a time fails at once with the reason.
 */
function makeFolder(dir: string): void {
  if (existsSync(dir)) {
    if (statSync(dir).isDirectory()) return;
    throw Object.assign(new Error(`${dir} is not a folder`), { code: 'ENOTDIR' });
  }
  const parent = dirname(dir);
  if (parent !== dir) makeFolder(parent);
  mkdirSync(dir);
}

/**
 * better-sqlite3 loads its native binary at the first `new Database()`. When that fails (a binary built for
 * another Node.js, a platform without a prebuilt one, a missing file), the reason is the driver, not the
 * database file: said in one line naming the module, its version and this Node.js.
 */
export function driverLoadFailure(error: unknown): StoreOpenError | undefined {
  const e = error as NodeJS.ErrnoException;
  const binary =
    e?.code === 'ERR_DLOPEN_FAILED' || (e?.code === 'MODULE_NOT_FOUND' && /\.node\b/.test(e.message));
  if (!binary) return undefined;
  const { version } = createRequire(import.meta.url)('better-sqlite3/package.json') as { version: string };
  const reason = e.message.split('\n')[0];
  return new StoreOpenError(
    `The SQLite driver better-sqlite3 ${version} cannot be loaded on Node.js ${process.version} (${process.platform}-${process.arch}): ${reason}. Reinstall the dependencies with this Node.js (pnpm install).`,
  );
}

/** Opens (creating when missing) and migrates the database; throws StoreOpenError with an operator's message. */
export function openDatabase(path: string, options: { integrityCheck?: boolean } = {}): Db {
  const fail = (reason: string) => new StoreOpenError(`DATABASE_URL: the SQLite database ${path} ${reason}.`);
  if (path === ':memory:') {
    try {
      return prepare(new Database(path), false);
    } catch (error) {
      throw driverLoadFailure(error) ?? error;
    }
  }
  try {
    if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
      throw fail('is a directory; point DATABASE_URL at a file inside it, e.g. animal-store.db');
    }
    makeFolder(dirname(path));
    const part = unwritablePart(path);
    if (part) {
      throw fail(`cannot be written: ${part}; give the service write access to the folder and its files`);
    }
    return prepare(new Database(path, { timeout: 5000 }), options.integrityCheck ?? true);
  } catch (error) {
    if (error instanceof StoreOpenError) throw error;
    throw driverLoadFailure(error) ?? fail(explain(path, error as NodeJS.ErrnoException));
  }
}

/**
 * `PRAGMA journal_mode = WAL` on a new file answers SQLITE_BUSY at once, without SQLite's busy timeout,
 * while another process is opening the same file (two workers, two instances starting together): tried
 * again every 10 ms for up to the busy timeout.
 */
function useWriteAheadLog(db: Db): void {
  const deadline = Date.now() + (db.pragma('busy_timeout', { simple: true }) as number);
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

function prepare(db: Db, integrityCheck: boolean): Db {
  try {
    useWriteAheadLog(db);
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    if (integrityCheck) {
      // quick_check reads every page once (linear in the file's size) and stops at the first problem: a
      // damaged store is refused at start instead of answering 500s and false 404s later.
      const result = db.pragma('quick_check(1)', { simple: true });
      if (result !== 'ok') throw Object.assign(new Error(String(result)), { code: 'SQLITE_CORRUPT' });
    }
    migrate(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

function migrate(db: Db): void {
  // An exclusive transaction, so two processes starting on one new file do not both migrate.
  db.transaction(() => {
    const applied = db.pragma('user_version', { simple: true }) as number;
    for (const [index, sql] of migrations.entries()) {
      if (index < applied) continue;
      db.exec(sql);
      db.pragma(`user_version = ${index + 1}`);
    }
    const fill = db.prepare<[string, string]>('UPDATE api_keys SET search_text = ? WHERE id = ?');
    for (const key of db.prepare<[], UnsearchableKey>(keysWithoutSearchText).all())
      fill.run(searchText(key.label, key.customer_id), key.id);
  }).exclusive();
}
