// A redis-server of one test's own, on a free loopback port (no persistence), killed when the test finishes:
// for tests that kill, stop (SIGSTOP) or restart it, or count what it ran.
import { freePort, spawnTied, toolFor, untilListening } from '@animal-store/test-support';
import { onTestFinished } from 'vitest';

export async function privateRedis() {
  const redisServer = toolFor('the suites on a Redis of their own', 'redis-server') as string;
  const port = await freePort();
  const start = async () => {
    const child = spawnTied(
      redisServer,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    await untilListening(port, 'redis-server');
    return child;
  };
  const handle = {
    child: await start(),
    port,
    url: `redis://127.0.0.1:${port}`,
    restart: async () => {
      handle.child = await start();
    },
  };
  onTestFinished(() => {
    handle.child.kill('SIGCONT');
    handle.child.kill('SIGKILL');
  });
  return handle;
}
