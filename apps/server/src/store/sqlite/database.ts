// Opens the SQLite database, refuses a damaged one, and brings its schema up to date. Migrations are
// append-only: each entry runs once, in order, inside a transaction, and PRAGMA user_version records how
// many have run. Numbering: an entry's position (from 1) is its schema version, the same on both engines
// (postgres/database.ts); its comment names the first release that ships it, or says "Unreleased (after
// x.y.z)" until the release commit names it (docs/releasing.md).
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { petStatuses } from '@animal-store/spec';
import Database from 'better-sqlite3';
import { planNames } from '../../plans.js';
import { keysWithoutSearchText, searchText, type UnsearchableKey } from '../key-query.js';
import { StoreOpenError } from '../open-error.js';
import { unwritablePart } from './failures.js';

export type Db = Database.Database;

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

const migrations: string[] = [
  `CREATE TABLE pets (
     id INTEGER PRIMARY KEY AUTOINCREMENT, -- AUTOINCREMENT: ids are never reused, even after deletes
     name TEXT NOT NULL,
     category_id INTEGER NOT NULL,
     status TEXT NOT NULL CHECK (status IN (${list(petStatuses)}))
   );
   CREATE INDEX pets_status_id ON pets (status, id);
   CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     secret_hash BLOB NOT NULL,
     plan TEXT NOT NULL CHECK (plan IN (${list(planNames)})),
     per_minute INTEGER,
     per_day INTEGER,
     label TEXT,
     created_at TEXT NOT NULL,
     revoked_at TEXT
   );
   CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
   -- rate-limiter-flexible's table layout for its better-sqlite3 store (created here, synchronously)
   CREATE TABLE rate_limits (key TEXT PRIMARY KEY, points INTEGER NOT NULL DEFAULT 0, expire INTEGER);`,
  // 1.1.0: Idempotency-Key on createPet; pet_id is set in the transaction that creates the pet.
  `CREATE TABLE idempotency_keys (
     api_key_id TEXT NOT NULL,
     key TEXT NOT NULL,
     fingerprint TEXT NOT NULL,
     pet_id INTEGER REFERENCES pets (id),
     created_at INTEGER NOT NULL,
     PRIMARY KEY (api_key_id, key)
   );
   CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);`,
  // 1.1.0: key management (last use, rotation with a grace period for the previous secret).
  `ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;
   ALTER TABLE api_keys ADD COLUMN previous_secret_hash BLOB;
   ALTER TABLE api_keys ADD COLUMN previous_valid_until TEXT;`,
  // 2.0.0: the limiter's leases (counters.ts) record what each take got.
  'ALTER TABLE rate_limits ADD COLUMN granted INTEGER NOT NULL DEFAULT 0;',
  // 2.0.0: the admin API: a key's customer, the Idempotency-Key of its create, usage per key and day.
  `ALTER TABLE api_keys ADD COLUMN customer_id TEXT;
   ALTER TABLE api_keys ADD COLUMN creation_request TEXT;
   ALTER TABLE api_keys ADD COLUMN creation_fingerprint TEXT;
   CREATE UNIQUE INDEX api_keys_creation_request ON api_keys (creation_request);
   CREATE INDEX api_keys_customer_id ON api_keys (customer_id);
   CREATE INDEX api_keys_created_at_id ON api_keys (created_at, id);
   CREATE TABLE key_usage (
     key_id TEXT NOT NULL,
     day TEXT NOT NULL,
     admitted INTEGER NOT NULL DEFAULT 0,
     limited INTEGER NOT NULL DEFAULT 0,
     banned INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (key_id, day)
   );
   CREATE INDEX key_usage_day ON key_usage (day);`,
  // 2.0.0: the claim's token, which fences an Idempotency-Key's create (idempotency.ts).
  'ALTER TABLE idempotency_keys ADD COLUMN claim TEXT;',
  // 2.1.0: until when a window's points may be held unused in leases, and by whom
  // (counters.ts).
  `ALTER TABLE rate_limits ADD COLUMN held_until INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE rate_limits ADD COLUMN held_by TEXT;`,
  // Unreleased (after 2.2.0): the audit trail of the admin API (audit.ts); AUTOINCREMENT never reuses a number.
  `CREATE TABLE audit_events (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     made_at TEXT NOT NULL,
     actor_name TEXT NOT NULL,
     actor_token TEXT NOT NULL,
     operation TEXT NOT NULL,
     key_id TEXT NOT NULL,
     request_id TEXT NOT NULL,
     terms_before TEXT,
     terms_after TEXT,
     previous_secret_valid_until TEXT,
     reset_windows TEXT
   );
   CREATE INDEX audit_events_key_id ON audit_events (key_id, id);
   CREATE INDEX audit_events_made_at ON audit_events (made_at);`,
  // Unreleased (after 2.2.0): a key's expiry and its reversible disable (admin API: updateKey).
  `ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
   ALTER TABLE api_keys ADD COLUMN disabled_at TEXT;`,
  // Unreleased (after 2.2.0): a key's search text (key-query.ts), filled at start for the keys without one.
  'ALTER TABLE api_keys ADD COLUMN search_text TEXT;',
];

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
