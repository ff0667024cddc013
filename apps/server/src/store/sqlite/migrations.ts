// The SQLite schema's migrations, append-only: each entry runs once, in order, inside a transaction
// (database.ts), and PRAGMA user_version records how many have run. Numbering: an entry's position (from 1)
// is its schema version, the same on both engines (postgres/migrations.ts); its comment names the first
// release that ships it, or says "Unreleased (after x.y.z)" until the release commit names it
// (docs/releasing.md).
import { petStatuses } from '@animal-store/spec';
import { planNames } from '../../plans.js';

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

export const migrations: string[] = [
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
