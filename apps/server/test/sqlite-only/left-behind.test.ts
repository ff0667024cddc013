// No process a test starts outlives the test's own process: a worker killed mid-run (a run cancelled, a set-up
// that timed out) never gets to stop what it started, so the server it started must die with it
// (test-support's spawnTied). Here the "worker" is a node process of this test's, killed with SIGKILL.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { startServerProcess } from '@animal-store/test-support';
import { describe, expect, it } from 'vitest';
import { serverDist } from '../support/harness.js';
import { heldWithin } from '../support/waits.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('a server a test started', () => {
  it('dies with the process that started it, even when that one is killed and stops nothing', async () => {
    const testSupport = createRequire(import.meta.url).resolve('@animal-store/test-support');
    const worker = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { startServerProcess } = await import(${JSON.stringify(testSupport)});
         const server = await startServerProcess(${JSON.stringify(serverDist)}, { DATABASE_URL: ':memory:' });
         console.log(JSON.stringify({ pid: server.child.pid, url: server.url }));
         setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const [line] = (await once(worker.stdout, 'data')) as [Buffer];
    const { pid, url } = JSON.parse(line.toString()) as { pid: number; url: string };
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    worker.kill('SIGKILL');
    await once(worker, 'exit');
    await heldWithin(() => !alive(pid), { timeout: 5_000, interval: 50 });
    const survived = alive(pid);
    if (survived) process.kill(pid, 'SIGKILL'); // this test's own clean-up, whatever it found
    expect(survived).toBe(false);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('is the server process itself: its pid answers signals as the server (SIGTERM drains, exit 0)', async () => {
    const server = await startServerProcess(serverDist, { DATABASE_URL: ':memory:' });
    expect(await server.stop()).toBe(0);
  });
});
