// A redis-server of the bench's own (no persistence, on loopback), so that its command counts are the
// bench's alone, and redis-cli on it.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';

export type BenchRedis = {
  url: string;
  /** `redis-cli` on it: its answer, or undefined when it does not answer. */
  cli(...args: string[]): string | undefined;
  /** Every command it ran since its statistics were reset, a script's own included (INFO commandstats). */
  commands(): number;
  stop(): void;
};

/** The Redis at `url` (one named by the user), or a private one started on a port of its own. */
export async function benchRedis(url?: string): Promise<BenchRedis> {
  let child: ChildProcess | undefined;
  if (!url) {
    const port = 20_000 + (process.pid % 10_000);
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    url = `redis://127.0.0.1:${port}`;
  }
  const at = url;
  const cli = (...args: string[]) => {
    try {
      return execFileSync('redis-cli', ['-u', at, ...args], { encoding: 'utf8', stdio: 'pipe' });
    } catch {
      return undefined;
    }
  };
  for (let i = 0; i < 100 && cli('PING')?.trim() !== 'PONG'; i++) await new Promise((r) => setTimeout(r, 50));
  return {
    url: at,
    cli,
    commands: () =>
      [...(cli('INFO', 'commandstats') ?? '').matchAll(/calls=(\d+)/g)].reduce(
        (sum, m) => sum + Number(m[1]),
        0,
      ),
    stop: () => child?.kill('SIGKILL'),
  };
}
