// A write whose connection to PostgreSQL is lost after the statement was sent: the store may have carried it
// out, and the answer says so (503 `write_unconfirmed`), never "nothing was changed". Between the server and
// PostgreSQL runs a TCP proxy of the test's own: the INSERT is held by a table lock, the proxy's connections
// are cut, then the lock is released, and PostgreSQL commits the INSERT it had received (as it does when
// PgBouncer dies under a statement).
import { createServer, type Socket, connect as tcpConnect } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { backend, freshStore } from '../support/backends.js';
import { call, startServer, type TestServer } from '../support/harness.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A TCP proxy to `target` on an ephemeral port; `cut()` ends every connection through it at once. */
async function proxyTo(target: URL) {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = tcpConnect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return {
    port: (server.address() as { port: number }).port,
    cut: () => {
      for (const socket of sockets) socket.resetAndDestroy();
    },
  };
}

describe.runIf(backend === 'postgres' || backend === 'postgres+redis')('a write whose answer is lost', () => {
  it('is answered 503 write_unconfirmed (it may have been made: here it was), and a read then is plain service_unavailable', async () => {
    const store = await freshStore();
    const direct = new URL(store.DATABASE_URL as string);
    const proxy = await proxyTo(direct);
    const proxied = new URL(direct);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    const server: TestServer = await startServer({ store: { ...store, DATABASE_URL: proxied.toString() } });
    cleanups.push(() => server.close());
    const key = await server.key();

    const locker = new pg.Client({ connectionString: direct.toString() });
    await locker.connect();
    cleanups.push(() => locker.end());
    const watcher = new pg.Client({ connectionString: direct.toString() });
    await watcher.connect();
    cleanups.push(() => watcher.end());
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE pets IN EXCLUSIVE MODE'); // an INSERT waits for it
    const answer = call(`${server.url}/v1/pets`, key, {
      method: 'POST',
      body: JSON.stringify({ name: 'Unconfirmed', categoryId: 1 }),
    });
    // pg_stat_activity is read once per transaction (the locker's is open): asked outside it.
    const waiting = (statement: string) => async () =>
      Number(
        (
          await watcher.query(
            `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database()
               AND wait_event_type = 'Lock' AND query ILIKE $1`,
            [`${statement}%pets%`],
          )
        ).rows[0].n,
      );
    const reached = { timeout: 15_000, message: 'the statement never reached PostgreSQL' };
    await expect.poll(waiting('INSERT'), reached).toBeGreaterThan(0);
    proxy.cut(); // the statement was sent; its answer will never come
    const res = await answer;
    await locker.query('COMMIT'); // PostgreSQL carries out the INSERT it received
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe('write_unconfirmed');
    expect(body.message).not.toContain('nothing was changed');
    const made = async () =>
      Number((await locker.query(`SELECT count(*) AS n FROM pets WHERE name = 'Unconfirmed'`)).rows[0].n);
    await expect.poll(made, { timeout: 2_500 }).toBe(1); // so "nothing was changed" would have been false

    // A read cut the same way changed nothing, and says so.
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE'); // a SELECT waits for it
    const read = call(`${server.url}/v1/pets`, key);
    await expect.poll(waiting('SELECT'), reached).toBeGreaterThan(0);
    proxy.cut();
    const readAnswer = await read;
    await locker.query('COMMIT');
    expect(readAnswer.status).toBe(503);
    expect(((await readAnswer.json()) as { code: string }).code).toBe('service_unavailable');
  });
});
