// Every start the docs show for running the service (not at a desk) stops by the PID it gives. Each line is
// run as written, in a shell as a reader's (its PORT made ephemeral), the shell is told `$!` as the reader
// is, and SIGTERM goes to that PID: the server itself must drain and exit 0, and its port must close. The
// form the docs used before, `npx -y -p node@24 -c apps/server/bin/… &`, fails here: npm exec does not pass
// the signal on, and the server goes on serving, re-parented to PID 1. (`pnpm start` is a desk's start,
// stopped with Ctrl-C: process.test.ts.)
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listeningUrl, type Spawned, spawnUntilReady, tempDatabase } from '@animal-store/test-support';
import { afterEach, describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../../../', import.meta.url));
const doc = (name: string) => readFileSync(join(repo, 'docs', name), 'utf8');

/** The lines of a page's `sh` blocks that start something in the background (`… &`, not `&&`). */
const backgroundStarts = (markdown: string) =>
  [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap(([, block = '']) => block.split('\n'))
    .filter((line) => /[^&]&\s*(#.*)?$/.test(line));

/** A reader's environment: the Node.js the suite runs on first on the PATH, a store of its own. */
const readersEnv = () => ({
  PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
  HOME: process.env.HOME ?? '/root',
  NODE_ENV: 'production',
  HOST: '127.0.0.1',
  DATABASE_URL: tempDatabase(),
});

const refused = async (url: string) =>
  fetch(`${url}/healthz`).then(
    () => false,
    () => true,
  );

const started: Spawned[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((shell) => shell.stop())); // the shell's whole process group
});

describe('the starts in docs/scaling-out.md', () => {
  const lines = backgroundStarts(doc('scaling-out.md'));

  it('are there: one line per instance', () => {
    expect(lines.length).toBeGreaterThanOrEqual(2);
  });

  it.each(lines)('`%s`: SIGTERM to $! drains the server, which exits 0 and frees its port', async (line) => {
    const script = `${line.replace(/\bPORT=\d+/, 'PORT=0')}\npid=$!\necho "pid=$pid"\nwait "$pid"\necho "exit=$?"`;
    const shell = await spawnUntilReady('sh', ['-c', script], {
      cwd: repo,
      env: readersEnv(),
      ready: (output) => /pid=\d+/.test(output) && listeningUrl(output) !== undefined,
    });
    started.push(shell);
    const pid = Number(/pid=(\d+)/.exec(shell.output())?.[1]);
    const url = listeningUrl(shell.output()) as string;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    process.kill(pid, 'SIGTERM');
    const ended = await new Promise<number | null>((resolve) => shell.child.once('exit', resolve));
    expect(ended).toBe(0);
    expect(shell.output()).toContain('exit=0'); // what `wait $!` reports: the server's own exit
    expect(await refused(url)).toBe(true);
  });
});

describe('the systemd unit in docs/running.md', () => {
  it('its ExecStart is the server: SIGTERM to that PID exits 0 within TimeoutStopSec', async () => {
    const unit = doc('running.md');
    const execStart = /^ExecStart=(\S+)$/m.exec(unit)?.[1] as string;
    const stopSeconds = Number(/^TimeoutStopSec=(\d+)$/m.exec(unit)?.[1]);
    expect(execStart).toMatch(/^\/srv\/animal-store\//);
    const server = await spawnUntilReady(execStart.replace('/srv/animal-store/', repo), [], {
      cwd: repo,
      env: { ...readersEnv(), PORT: '0' },
      ready: (output) => listeningUrl(output) !== undefined,
    });
    started.push(server);
    const url = listeningUrl(server.output()) as string;
    const since = Date.now();
    process.kill(server.child.pid as number, 'SIGTERM'); // systemd's stop: the PID it started
    const code = await new Promise<number | null>((resolve) => server.child.once('exit', resolve));
    expect(code).toBe(0);
    expect(Date.now() - since).toBeLessThan(stopSeconds * 1_000);
    expect(await refused(url)).toBe(true);
  });
});
