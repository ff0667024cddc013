// The PostgreSQL engine: a pg Pool, versioned migrations run at start under an advisory lock (N instances
// starting at once migrate once), and the repositories. Connection-level failures become
// StoreUnavailableError (503), and the pool reconnects by itself when the server returns.
import { petStatuses } from '@animal-store/spec';
import pg from 'pg';
import { type Plan, planNames, planQuotas } from '../../plans.js';
import { matches, newKeyRow, newKeyToken, parseKeyToken } from '../key-tokens.js';
import { StoreOpenError } from '../open-error.js';
import type { ApiKey, PetStore, Store } from '../store.js';
import { StoreUnavailableError } from '../unavailable.js';

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

const migrations: string[] = [
  `CREATE TABLE pets (
     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- ids are never reused
     name TEXT NOT NULL,
     category_id BIGINT NOT NULL,
     status TEXT NOT NULL CHECK (status IN (${list(petStatuses)}))
   );
   CREATE INDEX pets_status_id ON pets (status, id);
   CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     secret_hash BYTEA NOT NULL,
     plan TEXT NOT NULL CHECK (plan IN (${list(planNames)})),
     per_minute BIGINT, -- enterprise quotas may exceed 2^31 (JSON-safe integers up to 2^53)
     per_day BIGINT,
     label TEXT,
     created_at TEXT NOT NULL,
     revoked_at TEXT
   );
   CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
   -- rate-limiter-flexible's table layout for its PostgreSQL store (created here, once)
   CREATE TABLE rate_limits (key VARCHAR(255) PRIMARY KEY, points INTEGER NOT NULL DEFAULT 0, expire BIGINT);`,
  // 1.1.0: Idempotency-Key on createPet; pet_id is set in the transaction that creates the pet.
  `CREATE TABLE idempotency_keys (
     api_key_id TEXT NOT NULL,
     key TEXT NOT NULL,
     fingerprint TEXT NOT NULL,
     pet_id BIGINT REFERENCES pets (id),
     created_at BIGINT NOT NULL,
     PRIMARY KEY (api_key_id, key)
   );
   CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);`,
  // 1.1.0: key management (last use, rotation with a grace period for the previous secret).
  `ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;
   ALTER TABLE api_keys ADD COLUMN previous_secret_hash BYTEA;
   ALTER TABLE api_keys ADD COLUMN previous_valid_until TEXT;`,
];
/** Any constant: the advisory lock that serialises migrations across instances. */
const migrationLock = 0x616e696d; // "anim"

/** SQLSTATE classes that mean "not now" rather than "never": connection, shutdown, statement or lock timeout, resources, serialization. */
const transient = /^(08|57P0|57014|55P03|53|40001|40P01)/;
function classify(error: unknown): never {
  const e = error as NodeJS.ErrnoException & { code?: string };
  const connection =
    (typeof e.code === 'string' && transient.test(e.code)) ||
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'].includes(
      e.code ?? '',
    ) ||
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
      e.message ?? '',
    );
  if (connection) throw new StoreUnavailableError(`PostgreSQL is unavailable: ${e.code ?? e.message}`);
  throw error;
}

type PetRow = { id: string; name: string; category_id: string; status: Pet['status'] };
type Pet = Awaited<ReturnType<PetStore['create']>>;
const toPet = (row: PetRow): Pet => ({
  id: Number(row.id),
  name: row.name,
  categoryId: Number(row.category_id),
  status: row.status,
});
type KeyRow = {
  id: string;
  secret_hash: Buffer;
  plan: Plan;
  per_minute: string | null; // BIGINT
  per_day: string | null;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  previous_secret_hash: Buffer | null;
  previous_valid_until: string | null;
};
const toKey = (row: KeyRow): ApiKey => ({
  id: row.id,
  plan: row.plan,
  quota:
    row.plan === 'enterprise'
      ? { perMinute: Number(row.per_minute), perDay: Number(row.per_day) }
      : planQuotas[row.plan],
  label: row.label,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
  lastUsedAt: row.last_used_at,
});

export type PostgresOptions = { url: string; poolSize: number; statementTimeoutMs: number };

/** Connects, migrates (once across instances), and returns the store with its pool (for the limiter). */
export async function openPostgresStore(options: PostgresOptions): Promise<{ store: Store; pool: pg.Pool }> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize,
    statement_timeout: options.statementTimeoutMs,
    connectionTimeoutMillis: 3_000,
  });
  // An idle client whose server went away emits here; the pool replaces it. Without a listener the
  // process would crash.
  pool.on('error', () => {});
  try {
    const client = await pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [migrationLock]);
      await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)');
      const { rows } = await client.query<{ v: number | null }>(
        'SELECT max(version) AS v FROM schema_migrations',
      );
      for (const [index, sql] of migrations.entries()) {
        if (index < (rows[0]?.v ?? 0)) continue;
        await client.query('BEGIN');
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [index + 1]);
        await client.query('COMMIT');
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [migrationLock]).catch(() => {});
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => {});
    const where = new URL(options.url);
    where.password = '';
    throw new StoreOpenError(
      `DATABASE_URL: the PostgreSQL database ${where.host}${where.pathname} cannot be used (${(error as Error).message}); check that it is running and reachable, and the URL.`,
    );
  }

  const query = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => {
    try {
      return (await pool.query<R>(text, values)).rows;
    } catch (error) {
      return classify(error);
    }
  };

  const store: Store = {
    pets: {
      async create(pet, accept, scope) {
        let client: pg.PoolClient;
        try {
          client = await pool.connect();
        } catch (error) {
          return classify(error);
        }
        try {
          await client.query('BEGIN');
          const { rows } = await client.query<PetRow>(
            'INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING id, name, category_id, status',
            [pet.name, pet.categoryId, pet.status],
          );
          const stored = toPet(rows[0] as PetRow);
          accept(stored);
          if (scope) {
            await client.query('UPDATE idempotency_keys SET pet_id = $1 WHERE api_key_id = $2 AND key = $3', [
              stored.id,
              scope.apiKeyId,
              scope.key,
            ]);
          }
          await client.query('COMMIT');
          return stored;
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {});
          return classify(error);
        } finally {
          client.release();
        }
      },
      async getMany(ids, status) {
        const rows = await query<PetRow>(
          `SELECT id, name, category_id, status FROM pets WHERE id = ANY($1::bigint[])${status ? ' AND status = $2' : ''} ORDER BY id`,
          [ids.map(String), ...(status ? [status] : [])],
        );
        return rows.map(toPet);
      },
      async get(id) {
        const rows = await query<PetRow>('SELECT id, name, category_id, status FROM pets WHERE id = $1', [
          id.toString(),
        ]);
        return rows[0] && toPet(rows[0]);
      },
      async list({ limit, status, afterId }) {
        const rows = status
          ? await query<PetRow>(
              'SELECT id, name, category_id, status FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3',
              [status, afterId, limit + 1],
            )
          : await query<PetRow>(
              'SELECT id, name, category_id, status FROM pets WHERE id > $1 ORDER BY id LIMIT $2',
              [afterId, limit + 1],
            );
        return { pets: rows.slice(0, limit).map(toPet), hasMore: rows.length > limit };
      },
    },
    keys: {
      async create(options) {
        const { token, values } = newKeyRow(options);
        const rows = await query<KeyRow>(
          'INSERT INTO api_keys (id, secret_hash, plan, per_minute, per_day, label, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *',
          [...values],
        );
        return { ...toKey(rows[0] as KeyRow), key: token };
      },
      async verify(token) {
        const parsed = parseKeyToken(token);
        if (!parsed) return undefined;
        const [row] = await query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [parsed.id]);
        return matches(parsed.secret, row) ? toKey(row) : undefined;
      },
      async list() {
        return (await query<KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id')).map(toKey);
      },
      async revoke(id) {
        const rows = await query(
          'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING id',
          [new Date().toISOString(), id],
        );
        return rows.length === 1;
      },
      async rotate(id, graceSeconds) {
        const { token, secretHash } = newKeyToken(id);
        const until = graceSeconds > 0 ? new Date(Date.now() + graceSeconds * 1000).toISOString() : null;
        const rows = await query(
          `UPDATE api_keys SET previous_secret_hash = CASE WHEN $2::text IS NULL THEN NULL ELSE secret_hash END,
             previous_valid_until = $2, secret_hash = $1 WHERE id = $3 AND revoked_at IS NULL RETURNING id`,
          [secretHash, until, id],
        );
        return rows.length === 1 ? token : undefined;
      },
      async touch(id) {
        await query('UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [new Date().toISOString(), id]);
      },
      async isEmpty() {
        return (await query('SELECT id FROM api_keys LIMIT 1')).length === 0;
      },
    },
    idempotency: {
      async claim(scope, fingerprint, t) {
        // One statement decides: insert, or replace a stale record, or leave the live one; concurrent
        // claims of one key serialise on its primary key, and exactly one of them gets a row back.
        const claimed = await query(
          `INSERT INTO idempotency_keys (api_key_id, key, fingerprint, created_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (api_key_id, key) DO UPDATE
             SET fingerprint = EXCLUDED.fingerprint, created_at = EXCLUDED.created_at, pet_id = NULL
             WHERE idempotency_keys.created_at < $5 OR (idempotency_keys.pet_id IS NULL AND idempotency_keys.created_at < $6)
           RETURNING key`,
          [scope.apiKeyId, scope.key, fingerprint, t.now, t.expireBefore, t.abandonBefore],
        );
        if (claimed.length === 1) return undefined;
        const [row] = await query<PetRow & { fingerprint: string; pet_id: string | null }>(
          `SELECT k.fingerprint, k.pet_id, p.id, p.name, p.category_id, p.status
             FROM idempotency_keys k LEFT JOIN pets p ON p.id = k.pet_id
            WHERE k.api_key_id = $1 AND k.key = $2`,
          [scope.apiKeyId, scope.key],
        );
        if (!row) return this.claim(scope, fingerprint, t); // released meanwhile: try again
        return { fingerprint: row.fingerprint, ...(row.pet_id !== null && { pet: toPet(row) }) };
      },
      async release(scope) {
        await query('DELETE FROM idempotency_keys WHERE api_key_id = $1 AND key = $2 AND pet_id IS NULL', [
          scope.apiKeyId,
          scope.key,
        ]);
      },
      async prune(before) {
        return (await query('DELETE FROM idempotency_keys WHERE created_at < $1 RETURNING key', [before]))
          .length;
      },
    },
    async setting(name, create) {
      await query('INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
        name,
        create(),
      ]);
      const [row] = await query<{ value: string }>('SELECT value FROM settings WHERE name = $1', [name]);
      return (row as { value: string }).value;
    },
    async check({ write = false } = {}) {
      await query('SELECT (SELECT max(id) FROM pets), (SELECT id FROM api_keys LIMIT 1)');
      if (write) await query("UPDATE settings SET value = value WHERE name = 'cursor_secret'");
    },
    async close() {
      await pool.end();
    },
  };
  return { store, pool };
}
