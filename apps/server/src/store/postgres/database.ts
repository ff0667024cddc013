// Opens the PostgreSQL pool and brings the schema up to date: versioned migrations (migrations.ts), run at
// start under an advisory lock (N instances starting at once migrate once). Connection-level and "not now"
// failures become StoreUnavailableError (503: failures.ts); the pool reconnects by itself when the server
// returns.
import pg from 'pg';
import { keysWithoutSearchText, searchText, type UnsearchableKey } from '../key-query.js';
import { StoreOpenError } from '../open-error.js';
import { connectionLost, resetConnection, translate } from './failures.js';
import { migrations } from './migrations.js';

/** How long a start may take to connect for its migrations (at least the requests' connection deadline). */
const startConnectMs = 3_000;
/** How long the migrations at start may take, each statement and each wait (at least the statement timeout). */
const migrationTimeoutMs = 120_000;
/** Any constant: the advisory lock that serialises migrations across instances. */
export const migrationLock = 0x616e696d; // "anim"

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
