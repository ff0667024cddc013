// PgBouncer's configuration for the suites that run through it (pgbouncer-setup.ts), the one
// docs/scaling-out.md shows operators: transaction pooling; the session settings the service sends at
// start-up (its statement, lock and idle-in-transaction timeouts) are not forwarded by PgBouncer, so it
// is told to ignore them, and each server connection gets them from `connect_query` instead.

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
