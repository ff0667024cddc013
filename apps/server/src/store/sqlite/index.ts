// The SQLite engine: one file (or :memory:) in WAL mode, opened synchronously behind the async Store.
import { readinessRead } from '../rows.js';
import type { Store } from '../store.js';
import { createSqliteAuditStore } from './audit.js';
import { type Db, openDatabase } from './database.js';
import { busyTimeoutMs, guarded, sqliteCall } from './failures.js';
import { createSqliteIdempotencyStore } from './idempotency.js';
import { createSqliteKeyStore } from './keys.js';
import { createSqlitePetStore } from './pets.js';
import { createSqliteUsageStore } from './usage.js';

export { sqliteCounters } from './counters.js';
export type { Db } from './database.js';
export { openDatabase } from './database.js';

export function sqliteStore(db: Db): Store {
  const readSetting = db.prepare<[string], { value: string }>('SELECT value FROM settings WHERE name = ?');
  const insertSetting = db.prepare('INSERT OR IGNORE INTO settings (name, value) VALUES (?, ?)');
  const setting = db.transaction((name: string, create: () => string) => {
    insertSetting.run(name, create());
    return (readSetting.get(name) as { value: string }).value;
  });
  const probe = db.prepare(readinessRead);
  // A write that leaves nothing behind but needs the disk: 64 KiB written and removed, committed (a smaller
  // one can fit in the file's free pages on a full disk and prove nothing).
  const insertProbe = db.prepare("INSERT INTO settings (name, value) VALUES ('readiness-probe', ?)");
  const deleteProbe = db.prepare("DELETE FROM settings WHERE name = 'readiness-probe'");
  const rewrite = db.transaction(() => {
    deleteProbe.run();
    insertProbe.run('x'.repeat(64 * 1024));
    deleteProbe.run();
  });
  return {
    pets: guarded(createSqlitePetStore(db), db.name),
    keys: guarded(createSqliteKeyStore(db), db.name),
    idempotency: guarded(createSqliteIdempotencyStore(db), db.name),
    usage: guarded(createSqliteUsageStore(db), db.name),
    audit: guarded(createSqliteAuditStore(db), db.name),
    setting: (name, create) => sqliteCall(() => setting.immediate(name, create), db.name),
    check: ({ write = false } = {}) =>
      sqliteCall(() => {
        probe.get();
        if (write) rewrite.immediate();
      }, db.name),
    async close() {
      db.close();
    },
  };
}

/**
 * Opens the file (see openDatabase) and wraps it as a Store; `db` is kept for the SQLite rate limiter.
 * From here on another process's write lock is waited for on the event loop (see failures.ts).
 */
export function openSqliteStore(path: string): { store: Store; db: Db } {
  const db = openDatabase(path);
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  return { store: sqliteStore(db), db };
}
