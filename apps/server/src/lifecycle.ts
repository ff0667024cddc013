// The lifecycle of a serving process, written once for a worker and for the cluster's primary: listening
// (a failure is a typed start error naming its variable), stopping once on SIGTERM or SIGINT within a hard
// bound, and the one line and exit status of a start that failed.
import cluster from 'node:cluster';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { ConfigError } from './config.js';
import { exitWhenWritten } from './log-output.js';
import { StoreOpenError } from './store/open-error.js';

/** A start that cannot go on: the message is one line that names the variable to change. */
export class StartError extends Error {
  override name = 'StartError';
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
  }
}

/**
 * Listens on host:port and resolves to the URL. A port in use or an address that cannot be taken is a
 * StartError naming the variables (`names`: PORT and HOST, or ADMIN_PORT and ADMIN_HOST).
 */
export async function listen(
  server: Server,
  where: { port: number; host: string },
  names: { port: string; host: string },
): Promise<string> {
  // A worker (WORKERS > 1) takes the port itself, beside its siblings (SO_REUSEPORT: the kernel spreads
  // connections over them evenly), rather than through the primary: a connection the primary had handed
  // to a worker that died in that instant stayed open with nobody to answer it, until the client or a
  // proxy gave up (a minute, measured). A dead worker's queued connections are reset instead.
  if (cluster.isWorker)
    server.listen({ port: where.port, host: where.host, exclusive: true, reusePort: true });
  else server.listen(where.port, where.host);
  try {
    await once(server, 'listening');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const at = `${where.host}:${where.port}`;
    throw code === 'EADDRINUSE'
      ? new StartError(
          names.port,
          `${at} is already in use; stop the process that holds it, or set ${names.port} (0 picks a free one).`,
        )
      : new StartError(`${names.host}/${names.port}`, `cannot listen on ${at} (${code}); check both.`);
  }
  const { address, port } = server.address() as AddressInfo;
  return `http://${address}:${port}`;
}

/**
 * The longest a stop waits for its log's last lines (log-output.ts): a line's write ends in microseconds,
 * and with nothing logged at the end (LOG_LEVEL above info) the whole wait is spent.
 */
const lastLinesMs = 250;

/**
 * On the first SIGTERM or SIGINT, runs `stop` and exits 0; a second signal (the primary's, after the
 * process group's) does not cut it short. Whatever hangs, the process exits 1 after `boundMs`; `stop` is
 * told how much of it is left (`remainingMs`), for a last step that must not run past it. A stop that
 * fails is one error line and exit 1, never a stack trace.
 */
export function stopOnSignals(
  logger: Logger,
  boundMs: number,
  stop: (signal: string, remainingMs: () => number) => Promise<void>,
): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const endsAt = performance.now() + boundMs;
    const remainingMs = () => Math.max(0, endsAt - performance.now());
    const exit = (code: number) => exitWhenWritten(code, Math.min(lastLinesMs, remainingMs()));
    // The bound's last lastLinesMs are for the log's last lines (log-output.ts).
    setTimeout(() => void exit(1), Math.max(0, boundMs - lastLinesMs)).unref();
    try {
      await stop(signal, remainingMs);
    } catch (error) {
      logger.error({ error: (error as Error).message }, 'the stop failed');
      await exit(1);
    }
    logger.info('stopped');
    await exit(0);
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

/** Ends a start that failed: its one line on stderr, exit 2 for the configuration, 1 otherwise. */
export function startFailed(error: unknown): never {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  if (error instanceof StartError || error instanceof StoreOpenError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  throw error;
}
