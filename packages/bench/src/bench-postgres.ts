// The bench's own PostgreSQL database (with --backend), on the machine's server (BENCH_POSTGRES_URL):
// made and seeded as the SQLite file is, its transactions counted, and dropped at the end.
import { openBackend } from '@animal-store/server';
import pg from 'pg';
import { pino } from 'pino';
import { limitedKey, seed } from './contestants.js';

const serverUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const name = `animal_store_bench_${process.pid}`;
/** The bench's database. */
export const pgUrl = Object.assign(new URL(serverUrl), { pathname: `/${name}` }).toString();

/** Runs `sql` on the machine's PostgreSQL (its own database, not the bench's); the rows. */
async function onPostgres(sql: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return (await client.query(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/** Makes the bench's database and seeds it; its key's and its limited key's authorization headers. */
export async function seededPostgres(): Promise<{ key: string; limited: string }> {
  await onPostgres(`CREATE DATABASE ${name}`);
  const backend = await openBackend(
    { engine: 'postgres', url: pgUrl, poolSize: 4, statementTimeoutMs: 5_000 },
    undefined,
    pino({ level: 'silent' }),
  );
  const keys = { key: `Bearer ${await seed(backend.store)}`, limited: await limitedKey(backend.store) };
  await backend.close();
  return keys;
}

/** PostgreSQL transactions on the bench's database so far (pg_stat_database, flushed within a second). */
export async function postgresTransactions(): Promise<number> {
  await new Promise((r) => setTimeout(r, 1_100));
  const sql = 'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1';
  return Number((await onPostgres(sql, [name]))[0]?.n ?? 0);
}

export const dropPostgres = () => onPostgres(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
