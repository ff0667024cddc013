// The PostgreSQL engine: a pg Pool (database.ts; migrations.ts, failures.ts) behind the Store, in the
// same file shape as store/sqlite.
import { readinessRead } from '../rows.js';
import type { Store } from '../store.js';
import { createPostgresAuditStore } from './audit.js';
import { openDatabase, type Pg, type PostgresOptions } from './database.js';
import { createPostgresIdempotencyStore } from './idempotency.js';
import { createPostgresKeyStore } from './keys.js';
import { createPostgresPetStore } from './pets.js';
import { createPostgresUsageStore } from './usage.js';

export { postgresCounters } from './counters.js';
export type { Pg, PostgresOptions } from './database.js';

export function postgresStore(pg: Pg): Store {
  const { query, pool } = pg;
  return {
    pets: createPostgresPetStore(pg),
    keys: createPostgresKeyStore(pg),
    idempotency: createPostgresIdempotencyStore(pg),
    usage: createPostgresUsageStore(pg),
    audit: createPostgresAuditStore(pg),
    async setting(name, create) {
      await query('INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
        name,
        create(),
      ]);
      const [row] = await query<{ value: string }>('SELECT value FROM settings WHERE name = $1', [name]);
      return (row as { value: string }).value;
    },
    async check({ write = false } = {}) {
      await query(readinessRead);
      // A write that changes nothing but goes through the WAL, as every write does.
      if (write) await query("UPDATE settings SET value = value WHERE name = 'cursor_secret'");
    },
    async close() {
      await pool.end();
    },
  };
}

/** Connects, migrates (once across instances), and returns the store with its database (for the limiter). */
export async function openPostgresStore(options: PostgresOptions): Promise<{ store: Store; pg: Pg }> {
  const pg = await openDatabase(options);
  return { store: postgresStore(pg), pg };
}
