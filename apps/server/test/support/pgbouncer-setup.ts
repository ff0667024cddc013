// The postgres+pgbouncer project's global set-up (vitest.config.ts): a PgBouncer of the suite's own in
// transaction mode on TEST_PGBOUNCER_PORT, in front of the machine's PostgreSQL, configured as
// docs/scaling-out.md tells operators to (test/support/pgbouncer.ts), stopped after the project. PgBouncer refuses
// to run as root: as root it runs as the postgres user, in a temporary folder of its own.
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnTied, untilListening } from '@animal-store/test-support';
import { pgbouncerIni } from './pgbouncer.js';

const idOf = (flag: '-u' | '-g', user: string) =>
  Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim());

export default async function setup() {
  const port = Number(process.env.TEST_PGBOUNCER_PORT);
  const server = new URL(process.env.TEST_PGBOUNCER_SERVER ?? 'postgres://postgres@127.0.0.1:5432/test');
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-pgbouncer-'));
  chmodSync(dir, 0o777);
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(join(dir, 'users.txt'), `"${decodeURIComponent(server.username)}" ""\n`);
  writeFileSync(
    ini,
    pgbouncerIni({ port, host: server.hostname, serverPort: Number(server.port || 5432), dir }),
  );
  const asRoot = process.getuid?.() === 0;
  const bouncer = spawnTied(process.env.TEST_PGBOUNCER_BIN ?? 'pgbouncer', [ini], {
    stdio: 'ignore',
    ...(asRoot && { uid: idOf('-u', 'postgres'), gid: idOf('-g', 'postgres') }),
  });
  await untilListening(port, `pgbouncer (${dir})`);
  return async () => {
    bouncer.kill('SIGTERM');
    if (bouncer.exitCode === null && bouncer.signalCode === null) await once(bouncer, 'exit');
    rmSync(dir, { recursive: true, force: true });
  };
}
