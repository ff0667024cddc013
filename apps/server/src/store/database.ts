// Opens the SQLite database and brings its schema up to date. Migrations are append-only: each entry runs
// once, in order, inside a transaction, and PRAGMA user_version records how many have run.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

export type Db = Database.Database;

const migrations: string[] = [
  `CREATE TABLE pets (
     id INTEGER PRIMARY KEY AUTOINCREMENT, -- AUTOINCREMENT: ids are never reused, even after deletes
     name TEXT NOT NULL,
     category_id INTEGER NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('available', 'pending', 'sold'))
   );
   CREATE INDEX pets_status_id ON pets (status, id);
   CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     secret_hash BLOB NOT NULL,
     plan TEXT NOT NULL CHECK (plan IN ('free', 'pro', 'business', 'enterprise')),
     per_minute INTEGER,
     per_day INTEGER,
     label TEXT,
     created_at TEXT NOT NULL,
     revoked_at TEXT
   );
   CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
   -- rate-limiter-flexible's table layout for its better-sqlite3 store (created here, synchronously)
   CREATE TABLE rate_limits (key TEXT PRIMARY KEY, points INTEGER NOT NULL DEFAULT 0, expire INTEGER);`,
];

export function openDatabase(path: string): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { timeout: 5000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  migrate(db);
  return db;
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
  }).exclusive();
}

/** A value stored once per database (e.g. the cursor signing secret), created on first use. */
export function setting(db: Db, name: string, create: () => string): string {
  return db
    .transaction(() => {
      db.prepare('INSERT OR IGNORE INTO settings (name, value) VALUES (?, ?)').run(name, create());
      return (db.prepare('SELECT value FROM settings WHERE name = ?').get(name) as { value: string }).value;
    })
    .immediate();
}
