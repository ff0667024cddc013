// A child process for tests: started, its output collected, awaited until it prints that it is ready,
// and stopped with SIGTERM (its whole process group, as tools like Prism start helpers).
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { type AddressInfo, connect, createServer } from 'node:net';
import { setInterval } from 'node:timers/promises';

export type Spawned = {
  child: ChildProcess;
  /** Everything printed so far, stdout and stderr. */
  output: () => string;
  /** SIGTERM, then the exit code (null when killed by a signal). */
  stop: () => Promise<number | null>;
};

const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));

/**
 * `spawn`, the child set to be killed (SIGKILL) when this process dies: a test worker killed mid-run (a run
 * cancelled, a worker that timed out) leaves no server behind, where its own `stop` never ran. Linux's
 * parent-death signal, set by util-linux's `setpriv`, which then executes the command itself: the child's
 * pid and signals are the command's own. Where there is no setpriv, the command as it is.
 */
export const spawnTied = (command: string, args: string[], options: SpawnOptions): ChildProcess =>
  setpriv
    ? spawn(setpriv, ['--pdeathsig', 'SIGKILL', '--', command, ...args], options)
    : spawn(command, args, options);

export async function spawnUntilReady(
  command: string,
  args: string[],
  options: {
    env: NodeJS.ProcessEnv;
    ready: RegExp | ((output: string) => boolean);
    timeoutMs?: number;
    cwd?: string;
  },
): Promise<Spawned> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const child = spawnTied(command, args, {
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    ...(options.cwd && { cwd: options.cwd }),
  });
  let output = '';
  const ready =
    typeof options.ready === 'function'
      ? options.ready
      : (text: string) => (options.ready as RegExp).test(text);
  const stop = async () => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null)
      return child.exitCode;
    const exited = once(child, 'exit');
    process.kill(-(child.pid as number), 'SIGTERM');
    const [code] = await exited;
    return code as number | null;
  };
  // Settled by what the child does, not by polling: ready as soon as its output says so; failed when it
  // ends first (its output read to the end), or when the deadline passes (a loaded 2-core machine once
  // took 20 s to start a traced server).
  const started = new Promise<void>((resolve, reject) => {
    const fail = (why: string) => reject(new Error(`${command} ${why}:\n${output}`));
    const timer = setTimeout(() => fail(`did not start within ${timeoutMs} ms`), timeoutMs);
    const settle = () => {
      clearTimeout(timer);
      child.off('close', ended);
    };
    const ended = () => {
      settle();
      if (ready(output)) resolve();
      else fail('exited before it was ready');
    };
    child.on('close', ended);
    child.on('error', (error) => {
      settle();
      fail(`could not be started (${error.message})`);
    });
    const collect = (chunk: Buffer) => {
      output += chunk;
      if (ready(output)) {
        settle();
        resolve();
      }
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
  });
  try {
    await started;
  } catch (error) {
    await stop();
    throw error;
  }
  return { child, output: () => output, stop };
}

/** A TCP port free on loopback right now (for a process that must be told its port up front). */
export async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, 'close');
  return port;
}

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`; throws naming `what` after `timeoutMs`. */
export async function untilListening(port: number, what: string, timeoutMs = 5_000): Promise<void> {
  const accepts = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  const deadline = Date.now() + timeoutMs;
  if (await accepts()) return;
  // Asked again every 50 ms, a poll: the condition is what is waited on.
  for await (const _ of setInterval(50)) {
    if (await accepts()) return;
    if (Date.now() > deadline) throw new Error(`${what} did not listen on 127.0.0.1:${port}`);
  }
}

/**
 * `env` without the options of an npx the process may run under (`npx -p node@24 -p pnpm@10 -c '…'`, the
 * README's form and .ci/run's): they reach it as npm_config_call and npm_config_package, and an npx it
 * starts would read them and stop with a usage error. A reader's own shell has neither.
 */
export function withoutNpxOptions(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const { npm_config_call: _call, npm_config_package: _package, ...rest } = env;
  return rest;
}
