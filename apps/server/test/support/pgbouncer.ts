// PgBouncer for the suites that run through it: the project's own (pgbouncer-setup.ts) or a test's
// (killed under load), configured as docs/scaling-out.md shows operators: transaction pooling; the
// session settings the service sends at start-up (its statement, lock and idle-in-transaction timeouts)
// are not forwarded by PgBouncer, so it is told to ignore them, and each server connection gets them from
// `connect_query` instead. PgBouncer refuses to run as root: as root it runs as the postgres user, in a
// temporary folder of its own.
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnTied, untilListening } from '@animal-store/test-support';

/** The service's default DATABASE_STATEMENT_TIMEOUT_MS (config.ts), as set on every server connection. */
const statementTimeoutMs = 5_000;

export function pgbouncerIni(at: { port: number; host: string; serverPort: number; dir: string }): string {
  const settings = ['statement_timeout', 'lock_timeout', 'idle_in_transaction_session_timeout'];
  const connectQuery = settings.map((name) => `SET ${name} = ${statementTimeoutMs}`).join('; ');
  return [
    '[databases]',
    `* = host=${at.host} port=${at.serverPort} connect_query='${connectQuery}'`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${at.port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${at.dir}/users.txt`,
    'pool_mode = transaction',
    `ignore_startup_parameters = ${settings.join(', ')}`,
    'max_client_conn = 2000',
    'default_pool_size = 40',
    // Each test makes a database of its own, so each gets a pool of its own, whose idle server connections
    // PgBouncer keeps for server_idle_timeout (10 minutes by default): a file of fifteen tests held 33
    // connections of the server's 100 until its databases were dropped. Closed after a second idle instead
    // (a suite's next query opens a new one), a run fits beside another on one server.
    'server_idle_timeout = 1',
    `logfile = ${at.dir}/pgbouncer.log`,
    '',
  ].join('\n');
}

const idOf = (flag: '-u' | '-g', user: string) =>
  Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim());

/**
 * A PgBouncer on 127.0.0.1:`port` in front of the PostgreSQL at `server`; `kill` ends it with SIGKILL
 * (its folder kept, so that `start` runs it again on the same port), `stop` for good.
 */
export async function startPgbouncer(port: number, server: URL) {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-pgbouncer-'));
  chmodSync(dir, 0o777);
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(join(dir, 'users.txt'), `"${decodeURIComponent(server.username)}" ""\n`);
  writeFileSync(
    ini,
    pgbouncerIni({ port, host: server.hostname, serverPort: Number(server.port || 5432), dir }),
  );
  const asRoot = process.getuid?.() === 0;
  let bouncer: ReturnType<typeof spawnTied>;
  const end = async (signal: NodeJS.Signals) => {
    bouncer.kill(signal);
    if (bouncer.exitCode === null && bouncer.signalCode === null) await once(bouncer, 'exit');
  };
  const start = async () => {
    bouncer = spawnTied(process.env.TEST_PGBOUNCER_BIN ?? 'pgbouncer', [ini], {
      stdio: 'ignore',
      ...(asRoot && { uid: idOf('-u', 'postgres'), gid: idOf('-g', 'postgres') }),
    });
    await untilListening(port, `pgbouncer (${dir})`);
  };
  await start();
  return {
    start,
    kill: () => end('SIGKILL'),
    async stop() {
      await end('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
