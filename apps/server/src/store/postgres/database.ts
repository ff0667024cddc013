// Opens the PostgreSQL pool and brings the schema up to date: versioned migrations, run at start under an
// advisory lock (N instances starting at once migrate once). Connection-level and "not now" failures
// become StoreUnavailableError (503) here; the pool reconnects by itself when the server returns.
import { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { petStatuses } from '@animal-store/spec';
import pg from 'pg';
import { planNames } from '../../plans.js';
import { keysWithoutSearchText, searchText, type UnsearchableKey } from '../key-query.js';
import { StoreOpenError } from '../open-error.js';
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
  // 2.0.0: the limiter's leases (store/postgres/counters.ts) record what each take got; windows of
  // enterprise quotas may count past 2^31.
  `ALTER TABLE rate_limits ALTER COLUMN points TYPE BIGINT;
   ALTER TABLE rate_limits ADD COLUMN granted BIGINT NOT NULL DEFAULT 0;`,
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
     admitted BIGINT NOT NULL DEFAULT 0,
     limited BIGINT NOT NULL DEFAULT 0,
     banned BIGINT NOT NULL DEFAULT 0,
     PRIMARY KEY (key_id, day)
   );
   CREATE INDEX key_usage_day ON key_usage (day);`,
  // 2.0.0: the claim's token, which fences an Idempotency-Key's create (idempotency.ts).
  'ALTER TABLE idempotency_keys ADD COLUMN claim TEXT;',
  // 2.1.0: until when a window's points may be held unused in leases, and by whom
  // (counters.ts).
  `ALTER TABLE rate_limits ADD COLUMN held_until BIGINT NOT NULL DEFAULT 0;
   ALTER TABLE rate_limits ADD COLUMN held_by TEXT;`,
  // Unreleased (after 2.2.0): the audit trail of the admin API (audit.ts).
  `CREATE TABLE audit_events (
     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
  // Unreleased (after 2.2.0): every key's ban, listed in one statement by each instance every second
  // (limits/bans.ts): a partial index of those rows alone, usable under any collation (the statement
  // repeats its predicate).
  "CREATE INDEX rate_limits_bans ON rate_limits (key) WHERE key LIKE 'ban:%';",
  // Unreleased (after 2.2.0): a key's search text (key-query.ts), filled at start for the keys without one.
  'ALTER TABLE api_keys ADD COLUMN search_text TEXT;',
];
/** How long a start may take to connect for its migrations (at least the requests' connection deadline). */
const startConnectMs = 3_000;
/** How long the migrations at start may take, each statement and each wait (at least the statement timeout). */
const migrationTimeoutMs = 120_000;
/** Any constant: the advisory lock that serialises migrations across instances. */
export const migrationLock = 0x616e696d; // "anim"

/**
 * SQLSTATE classes that mean "not now" rather than "never": connection, shutdown, statement, lock or
 * idle-transaction timeout, resources, serialization; and, for a service already running, a server that
 * refuses new connections for its credentials (class 28: a changed password, a dropped role) or its
 * database (3D000: dropped or renamed): an operator's to mend, and the service answers again once it is,
 * without a restart.
 */
const transient = /^(08|57P0|57014|55P03|25P03|53|40001|40P01|28|3D000)/;

/** What a refusal means, for the log line of a 503 (the SQLSTATE alone says little to an operator). */
const refusals: Record<string, string> = {
  '28P01': "the server refuses DATABASE_URL's password",
  '28000': "the server refuses DATABASE_URL's user",
  '3D000': "DATABASE_URL's database does not exist",
};

/**
 * Whether `error` left the connection out of step with the server: a network failure, or a deadline of
 * ours (the server never answered). Such a connection is destroyed, never asked again.
 */
export function connectionLost(error: unknown): boolean {
  const e = error as NodeJS.ErrnoException;
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH'].includes(
      e.code ?? '',
    ) ||
    /Connection terminated|timeout exceeded when trying to connect|timeout expired|Query read timeout|Client has encountered a connection error/i.test(
      e.message ?? '',
    )
  );
}

/**
 * Whether a lost connection may have carried the statement out: it was lost after the statement was sent
 * (reset, closed or silent mid-query), not while connecting. The server's own errors (an SQLSTATE) say
 * the statement failed.
 */
function lostAfterSending(error: unknown): boolean {
  const e = error as NodeJS.ErrnoException;
  if (/trying to connect|connection timeout/i.test(e.message ?? '')) return false;
  return (
    ['ECONNRESET', 'EPIPE'].includes(e.code ?? '') ||
    /Connection terminated unexpectedly|Query read timeout|Client has encountered a connection error/i.test(
      e.message ?? '',
    )
  );
}

/** The store's error for a PostgreSQL failure (503 for "not now"), or the error itself (a bug). */
export function translate(error: unknown): unknown {
  const e = error as NodeJS.ErrnoException & { code?: string };
  const notNow = (typeof e.code === 'string' && transient.test(e.code)) || connectionLost(error);
  if (!notNow) return error;
  const why = e.code ? `${e.code}${refusals[e.code] ? `: ${refusals[e.code]}` : ''}` : e.message;
  return new StoreUnavailableError(`PostgreSQL is unavailable: ${why}`, lostAfterSending(error));
}

/**
 * What the network may add to a statement the server ended within its statement timeout: past it, the
 * client gives up on the connection (a silent partition answers nothing, ever). See clientDeadlines.
 */
const networkMarginMs = 250;

/**
 * The pool's deadlines, all from the statement timeout S, so that no request waits past S + 1 s whatever
 * the network does (docs/failures.md, "Deadlines"). The server enforces S on each statement and lock
 * wait, and ends a transaction left idle for S (its client cut off: its locks are freed). The client
 * enforces what the server cannot when it cannot be reached: a connection (TCP and start-up) within
 * min(3 s, S), a query's answer within S + networkMarginMs; a connection that missed either is destroyed.
 * TCP keepalive finds idle pooled connections whose peer went silent.
 */
function clientDeadlines(statementTimeoutMs: number): pg.PoolConfig {
  return {
    statement_timeout: statementTimeoutMs,
    lock_timeout: statementTimeoutMs,
    idle_in_transaction_session_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + networkMarginMs,
    connectionTimeoutMillis: Math.min(3_000, statementTimeoutMs),
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

/**
 * The pool; one statement run on it with its failure translated; and a connection checked out for a
 * transaction, whose statements share one deadline with the checkout (see checkout).
 */
export type Pg = {
  pool: pg.Pool;
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  checkout(): Promise<Checkout>;
};

/** A connection checked out of the pool: `run` a statement within what is left of the deadline. */
export type Checkout = {
  client: pg.PoolClient;
  run<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
};

/**
 * A connection from the pool within `ms` in all. pg-pool gives waiting for a free connection and making a
 * new one a deadline each, one after the other: a request queued behind a frozen server waited out the
 * first, then the second (3.1 s where the statement timeout was 1.5 s). A connection that comes after the
 * deadline goes back to the pool.
 */
async function connectWithin(pool: pg.Pool, ms: number): Promise<pg.PoolClient> {
  let timer: NodeJS.Timeout | undefined;
  const connecting = pool.connect();
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout exceeded when trying to connect')), ms);
  });
  try {
    return await Promise.race([connecting, late]);
  } catch (error) {
    connecting.then(
      (client) => client.release(),
      () => {},
    );
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Ends a connection given up on (its answer missed the deadline, or it broke) with a TCP reset, so that a
 * statement cut off by a partition never arrives after it heals. Over TLS it is destroyed as pg would:
 * a TLS socket cannot reset (Node throws ERR_INVALID_HANDLE_TYPE), and resetting the TCP socket under a
 * live one crashes the process (measured on Node 24), so there the kernel may still deliver it. One
 * without a handle (already closed) is destroyed.
 * Written by hand: docs/decisions.md#pg-connection-reset
 */
export function resetConnection(client: pg.PoolClient): void {
  const socket = (Reflect.get(client, 'connection') as { stream?: unknown } | undefined)?.stream;
  if (!(socket instanceof Socket) || socket.destroyed) return;
  socket.on('error', () => {}); // what its end may still say: it is discarded
  if (socket instanceof TLSSocket || !Reflect.get(socket, '_handle')) socket.destroy();
  else socket.resetAndDestroy();
}

export type PostgresOptions = { url: string; poolSize: number; statementTimeoutMs: number };

/** Connects and migrates (once across instances); throws StoreOpenError with an operator's message. */
export async function openDatabase(options: PostgresOptions): Promise<Pg> {
  const deadlines = clientDeadlines(options.statementTimeoutMs);
  const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize, ...deadlines });
  // A connection whose backend goes away (terminated, a restart) emits 'error' on its client. pg-pool
  // listens only while the client is idle (then re-emits here) and removes its listener at checkout, so a
  // client checked out for a transaction had none, and the event took the process down. Every client gets
  // its own listener for its whole life, from the moment the pool makes it; the query in flight rejects
  // with the same error (a 503), and the client is released with it, so the pool discards it.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  pool.on('release', (error: Error | boolean | undefined, client) => {
    if (error === true || (error instanceof Error && connectionLost(error))) resetConnection(client);
  });
  try {
    // One transaction under a transaction-level advisory lock: N instances starting at once migrate once,
    // and a pooler in transaction mode (PgBouncer) keeps the lock and the migrations on one server
    // connection (a session lock and statements outside a transaction could each land on another).
    // Its own connection, made within startConnectMs whatever the statement timeout: a start is not a
    // request (with DATABASE_STATEMENT_TIMEOUT_MS=300, a start on a busy machine missed the requests'
    // connection deadline of 300 ms and failed).
    const client = new pg.Client({
      connectionString: options.url,
      ...deadlines,
      connectionTimeoutMillis: startConnectMs,
    });
    client.on('error', () => {}); // a failure rejects the statement in flight, or the next one
    await client.connect();
    // The migrations run under deadlines of their own, not the requests' statement timeout: a migration
    // on a big table, or an instance waiting for another's migrations under the lock, may take longer than
    // any request may (with DATABASE_STATEMENT_TIMEOUT_MS=300, a start on a busy machine was cut off in its
    // transaction and failed). Still bounded, so that a start never hangs on a database that stopped. Set
    // in the message that begins the transaction (one simple query): sent after it, a process slow between
    // the two (a loaded machine) met the requests' idle-in-transaction timeout first.
    const migrationMs = Math.max(migrationTimeoutMs, options.statementTimeoutMs);
    const migrate = (text: string, values?: unknown[]) =>
      client.query({ text, values, query_timeout: migrationMs + networkMarginMs } as pg.QueryConfig);
    try {
      const ownDeadlines = ['statement_timeout', 'lock_timeout', 'idle_in_transaction_session_timeout'].map(
        (setting) => `SET LOCAL ${setting} = ${migrationMs}`,
      );
      await migrate(['BEGIN', ...ownDeadlines].join('; '));
      await migrate('SELECT pg_advisory_xact_lock($1)', [migrationLock]);
      await migrate('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)');
      const { rows } = await migrate('SELECT max(version) AS v FROM schema_migrations');
      const done = Number((rows[0] as { v: number | null } | undefined)?.v ?? 0);
      for (const [index, sql] of migrations.entries()) {
        if (index < done) continue;
        await migrate(sql);
        await migrate('INSERT INTO schema_migrations (version) VALUES ($1)', [index + 1]);
      }
      const { rows: unsearchable } = await migrate(keysWithoutSearchText);
      for (const key of unsearchable as UnsearchableKey[])
        await migrate('UPDATE api_keys SET search_text = $1 WHERE id = $2', [
          searchText(key.label, key.customer_id),
          key.id,
        ]);
      await migrate('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      await client.end().catch(() => {});
    }
  } catch (error) {
    await pool.end().catch(() => {});
    const where = new URL(options.url);
    where.password = '';
    throw new StoreOpenError(
      `DATABASE_URL: the PostgreSQL database ${where.host}${where.pathname} cannot be used (${(error as Error).message}); check that it is running and reachable, and the URL.`,
    );
  }
  // One deadline from the moment a connection is asked for: the connection within min(3 s, S), and every
  // statement after it within what is left of S + networkMarginMs (clientDeadlines), so that a request
  // waits S + 1 s at most whatever it waited for.
  const { connectionTimeoutMillis: connectMs = 0, query_timeout: boundMs = 0 } = deadlines;
  const checkout = async (): Promise<Checkout> => {
    const started = performance.now();
    let client: pg.PoolClient;
    try {
      client = await connectWithin(pool, connectMs);
    } catch (error) {
      throw translate(error);
    }
    const left = () => Math.max(1, Math.round(boundMs - (performance.now() - started)));
    return {
      client,
      run: <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) =>
        client.query<R>({ text, values, query_timeout: left() } as pg.QueryConfig),
    };
  };
  return {
    pool,
    checkout,
    async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []) {
      const { client, run } = await checkout();
      try {
        const { rows } = await run<R>(text, values);
        client.release();
        return rows;
      } catch (error) {
        client.release(error as Error); // as pg-pool's own query: a connection that failed is not reused
        throw translate(error);
      }
    },
  };
}
