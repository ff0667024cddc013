// The postgres+pgbouncer project's global set-up (vitest.config.ts): a PgBouncer of the suite's own in
// transaction mode on TEST_PGBOUNCER_PORT, in front of the machine's PostgreSQL (test/support/pgbouncer.ts),
// stopped after the project.
import { startPgbouncer } from './pgbouncer.js';

export default async function setup() {
  const bouncer = await startPgbouncer(
    Number(process.env.TEST_PGBOUNCER_PORT),
    new URL(process.env.TEST_PGBOUNCER_SERVER ?? 'postgres://postgres@127.0.0.1:5432/test'),
  );
  return () => bouncer.stop();
}
